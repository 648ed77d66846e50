// The account of the fake token service (helpers/service.ts), kept apart from it: the leak scanner, a setup file of
// every test file, searches for this password, and must not load nock, which service.ts does.

export const USERNAME = 'jane';
/** A password with colons, spaces and non-ASCII, as Basic must carry them. */
export const PASSWORD = 'p:ss wörd: 9';
