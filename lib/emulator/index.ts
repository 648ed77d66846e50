/**
 * A local stand-in of the token service over real HTTP, for your own tests: it spends none of the real account's
 * tokens. Node only. Start one with {@link startEmulator}.
 *
 * @module axios-token-keeper/emulator
 */
export { startEmulator, TokenServiceEmulator } from './server.js';
export type {
  EmulatorCall,
  EmulatorCounters,
  EmulatorDpopCheck,
  EmulatorDpopCounters,
  EmulatorDpopOptions,
  EmulatorDpopOutcome,
  EmulatorFault,
  EmulatorOptions,
  EmulatorRoute,
} from './types.js';
export type { TokenFormat } from './tokens.js';
