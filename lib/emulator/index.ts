export { startEmulator, TokenServiceEmulator } from './server.js';
export type { EmulatorCall, EmulatorCounters, EmulatorFault, EmulatorOptions, EmulatorRoute } from './server.js';
export type { TokenFormat } from './tokens.js';
