// `npm run emulator -- --port 8080 --access-ttl 30s`: the token-service emulator, standalone, for curl, an app or the
// examples; the same command the package ships as `npx axios-token-keeper-emulator`. `npm run emulator -- --help`.
import { runEmulatorCommand } from '../lib/emulator/command.js';

runEmulatorCommand('npm run emulator --', 'examples/quick-start.ts');
