// The house's rules, checked by `npm run check:layers` (in CI): no circles, no import up a floor, and the core reaches a
// layer only through its interface. ARCHITECTURE.md draws the floors.

/** The floors of lib/, bottom first: a floor imports only from the floors below it (and from itself). */
const FLOORS = [
  ['contract', '^lib/contract/'],
  ['support', '^lib/support/'],
  ['token-calls', '^lib/token-calls/'],
  ['dpop', '^lib/dpop/'],
  ['client-auth', '^lib/client-auth/'],
  ['stores', '^lib/stores/'],
  ['options', '^lib/options/'],
  ['account', '^lib/account/'],
  ['coordination', '^lib/coordination/'],
  ['request', '^lib/request/'],
  ['entries', '^lib/(attach|index|presets|otel)\\.ts$'],
];

const upward = FLOORS.slice(0, -1).map(([name, from], i) => ({
  name: `no-import-up-from-${name}`,
  comment: `${name} imports only from the floors below it: ${
    FLOORS.slice(0, i)
      .map(([below]) => below)
      .join(', ') || 'none'
  }.`,
  severity: 'error',
  from: { path: from },
  to: {
    path: FLOORS.slice(i + 1)
      .map(([, path]) => `(${path})`)
      .join('|'),
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No circles, type-only imports included: a room leans on the rooms below it.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'account-rooms-point-down',
      comment:
        "Within the account's floor, the renewal and the guards are rooms below the account that builds them: they never " +
        'import the keeper, its members or the accounts.',
      severity: 'error',
      from: { path: '^lib/account/(renewal|guards)/' },
      to: { path: '^lib/account/(keeper|members|accounts)\\.ts$' },
    },
    {
      name: 'guards-are-a-leaf-room',
      comment: "The guards know nothing of the account's other rooms.",
      severity: 'error',
      from: { path: '^lib/account/guards/' },
      to: { path: '^lib/account/(?!guards/)' },
    },
    {
      name: 'core-meets-coordination-through-its-interface',
      comment:
        "The core reaches the shared store's coordination through account/link.ts' StoreLink alone; only the wiring " +
        '(attach.ts) loads the layer, by import().',
      severity: 'error',
      from: { path: '^lib/', pathNot: '^lib/(coordination/|attach\\.ts$)' },
      to: { path: '^lib/coordination/' },
    },
    {
      name: 'client-auth-imported-by-the-app-alone',
      comment:
        'A client authentication is imported by the app from axios-token-keeper/client-auth, and the core meets it ' +
        'through contract/client-auth.ts alone: an app that uses none loads none.',
      severity: 'error',
      from: { path: '^lib/', pathNot: '^lib/client-auth/' },
      to: { path: '^lib/client-auth/' },
    },
    {
      name: 'coordination-loaded-lazily',
      comment: 'The coordination layer is loaded by import() only where a store is given: never statically.',
      severity: 'error',
      from: { path: '^lib/attach\\.ts$' },
      to: { path: '^lib/coordination/', dynamic: false },
    },
    {
      name: 'dpop-chosen-at-attach-only',
      comment:
        'DPoP is a token scheme, chosen where the options are resolved (options/resolve.ts); the rest of the core meets ' +
        "it through token-calls/scheme.ts' TokenScheme. The stores that keep its key load its key's record by import().",
      severity: 'error',
      from: { path: '^lib/', pathNot: '^lib/(dpop/|options/resolve\\.ts$|stores/|index\\.ts$)' },
      to: { path: '^lib/dpop/' },
    },
    {
      name: 'emulator-stands-alone',
      comment:
        'The emulator (the stand-in token service) leans on no room of the library: it is the service, not a client.',
      severity: 'error',
      from: { path: '^lib/emulator/' },
      to: { path: '^lib/(?!emulator/)' },
    },
    {
      name: 'nothing-leans-on-the-emulator',
      comment: 'No room of the library leans on the emulator: it ships beside the plugin for tests and the demo.',
      severity: 'error',
      from: { path: '^lib/(?!emulator/)' },
      to: { path: '^lib/emulator/' },
    },
    {
      name: 'dpop-work-loaded-lazily',
      comment: "DPoP's work (keys, proofs, nonces) loads by import() at the first call that needs it.",
      severity: 'error',
      from: { path: '^lib/(?!dpop/)' },
      to: { path: '^lib/dpop/(runtime|key|proof)\\.ts$', dynamic: false },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a floor that names a type of a floor above it leans on it as much.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
