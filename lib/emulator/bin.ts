#!/usr/bin/env node
// `npx axios-token-keeper-emulator`: the token-service emulator on 127.0.0.1:8080 until Ctrl-C, for trying the
// package (the Quick start) or your app without spending a real account's tokens. `--help` for its flags.
import { runEmulatorCommand } from './command.js';

runEmulatorCommand('npx axios-token-keeper-emulator', 'quick-start.ts');
