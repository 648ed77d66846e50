// The account the emulator knows in end-to-end tests and benchmarks, and the fleet's workers log in with.

export const E2E_USER = 'ops user';
/** Colons, spaces and non-ASCII, as a real password may have. */
export const E2E_PASSWORD = 'pa:ss wörd:';
