import { inspect } from 'node:util';
import axios, { AxiosError, AxiosHeaders } from 'axios';
import { TokenAuthError } from '../lib/index.js';
import { E2E_PASSWORD, E2E_USER } from './helpers/emulator.js';
import {
  expectNoLeaks,
  findLeaks,
  isPluginRejection,
  KNOWN_CREDENTIALS,
  literalSecrets,
  preview,
  scanRecords,
  secretsAtRest,
  tokenShapedIn,
} from './helpers/scan-secrets.js';
import type { Finding, Secret } from './helpers/scan-secrets.js';
import { PASSWORD, USERNAME } from './helpers/service.js';
import { rig } from './helpers/setup.js';

// The leak scanner (helpers/scan-secrets.ts): the suite-wide scan, a setup file of every test file, judges by
// findLeaks, and so do the tests of what the plugin hands out (the secrets-*.test.ts files, with `reachable`). These tests check
// findLeaks on crafted values, and that the setup file records what the plugin hands out.

const SECRETS = literalSecrets();
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ sub: 'jane', exp: 1767225600 })}.c2lnbmF0dXJlLWJ5dGVz`;
const BASIC_JANE = Buffer.from(`${USERNAME}:${PASSWORD}`, 'utf8').toString('base64');
const FAKE_ACCESS = 'acc-3-k2j4h5g6';
const EMULATOR_REFRESH = `ref_${'0123456789abcdef'.repeat(3)}`;

const names = (findings: Finding[]) => findings.map((finding) => finding.secret);

describe('findLeaks finds', () => {
  it('a token in the config header of a nested cause', () => {
    const config = {
      url: '/orders',
      method: 'get',
      headers: new AxiosHeaders({ Authorization: `Bearer ${FAKE_ACCESS}` }),
    };
    const axiosError = new AxiosError('Request failed with status code 503', 'ERR_BAD_RESPONSE', config as never);
    const error = new TokenAuthError('TOKEN_SERVICE_UNAVAILABLE', 'The token service answered with an error.', {
      cause: new Error('wrapped', { cause: axiosError }),
    });

    const findings = findLeaks(error, SECRETS);

    expect(findings).toHaveLength(1);
    expect(findings[0]!.secret).toMatch(/^token \(acc-\/ref-<n>-<nonce>\) "acc"… \(14 chars\)$/);
    expect(findings[0]!.paths).toContain('<value>.cause.cause.config.headers.Authorization');
    expect(findings[0]!.seenIn).toEqual(
      expect.arrayContaining(['util.inspect(<value>.cause.cause)', 'JSON.stringify(<value>.cause.cause)']),
    );
  });

  it('a Basic value in an event payload, known or only shaped like one', () => {
    const known = findLeaks({ method: 'GET', url: `/orders?auth=${BASIC_JANE}` }, SECRETS);
    expect(names(known)).toEqual([`Basic value of "jane" ${preview(BASIC_JANE)}`]);
    expect(known[0]!.paths).toEqual(['<value>.url']);

    const unknown = Buffer.from('someone:else entirely', 'utf8').toString('base64');
    expect(names(findLeaks({ operation: 'login', note: `sent Authorization: Basic ${unknown}` }, SECRETS))).toEqual([
      `Basic value (base64 of user:password) ${preview(unknown)}`,
    ]);
  });

  it('a JWT in a console line', () => {
    const args = ['renewed, now holding', JWT];
    const findings = findLeaks(args, SECRETS, { lines: [`renewed, now holding ${JWT}`] });

    expect(names(findings)).toEqual([`JWT ${preview(JWT)}`]);
    expect(findings[0]!.seenIn).toContain('console line');
    expect(findings[0]!.paths).toEqual(['<value>["1"]']);
  });

  it('the test passwords, the emulator tokens, and secrets only a serialiser shows', () => {
    expect(names(findLeaks(new Error(`no account matches ${E2E_USER}:${E2E_PASSWORD}`), SECRETS))).toEqual([
      `password of "ops user" ${preview(E2E_PASSWORD)}`,
    ]);
    expect(names(findLeaks({ data: { refresh: EMULATOR_REFRESH } }, SECRETS))).toEqual([
      `token (acc_/ref_<hex>) ${preview(EMULATOR_REFRESH)}`,
    ]);
    const findings = findLeaks({ toJSON: () => ({ leaked: FAKE_ACCESS }) }, SECRETS);
    expect(findings.map((finding) => [finding.seenIn, finding.paths])).toEqual([[['JSON.stringify(<value>)'], []]]);
  });

  it('cycles without looping, and prints no more of a secret than a short prefix', () => {
    const looped: Record<string, unknown> = {
      config: { headers: { Authorization: `Bearer ${FAKE_ACCESS}` } },
      password: PASSWORD,
    };
    looped.self = looped;

    const findings = findLeaks(looped, SECRETS);

    expect(findings).toHaveLength(2);
    const report = JSON.stringify(findings);
    for (const secret of [FAKE_ACCESS, PASSWORD, PASSWORD.slice(0, 5), FAKE_ACCESS.slice(0, 5)])
      expect(report).not.toContain(secret);
  });
});

describe('findLeaks passes', () => {
  it.each<[string, unknown]>([
    [
      'redacted headers',
      {
        headers: new AxiosHeaders({ Authorization: 'Bearer [REDACTED]', 'Proxy-Authorization': 'Basic [REDACTED]' }),
        data: '{"refresh_token":"[REDACTED]"}',
      },
    ],
    [
      'the plugin’s own messages',
      new TokenAuthError(
        'LOGIN_REJECTED',
        'The token service rejected the login (POST /auth/api/v1/accounts/login, HTTP 401: "Invalid username or password."). Check the `credentials`.',
        { status: 401 },
      ),
    ],
    [
      'ordinary words',
      'Basic auth with the access token and a refresh token; acc-repeated, ref-orphan-cafe, account-1-day, accessible',
    ],
    [
      'dotted names that are not JWTs',
      'api.example.com v1.2.3 127.0.0.1 lib/events.ts a.b.c abcdefghijkl.mnopqrstu.vwxyz eyJub3QiOiJqd3QifQ.eyJhIjoxfQ.sig',
    ],
    [
      'event payloads',
      [
        { reason: 'rejected', durationMs: 12 },
        { method: 'GET', url: '/orders?page=2' },
        { operation: 'refresh', code: 'REFRESH_REJECTED' },
      ],
    ],
  ])('%s', (_what, value) => {
    expect(findLeaks(value, SECRETS, { lines: typeof value === 'string' ? [value] : [] })).toEqual([]);
  });

  it('finds no token shape in [REDACTED]', () => {
    expect(tokenShapedIn('[REDACTED] Bearer [REDACTED] Basic [REDACTED]')).toEqual([]);
  });

  it('finds the private member of a DPoP key in every spelling a log gives it, and not the public members', async () => {
    const { privateKey } = await globalThis.crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ]);
    const jwk = await globalThis.crypto.subtle.exportKey('jwk', privateKey);
    const spellings = [JSON.stringify(jwk), JSON.stringify({ error: JSON.stringify(jwk) }), inspect(jwk)];
    for (const text of spellings) expect(tokenShapedIn(text)).toEqual([{ name: 'private JWK member', value: jwk.d }]);
    const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
    expect(tokenShapedIn(`${JSON.stringify(publicJwk)} ${inspect(publicJwk)}`)).toEqual([]);
  });

  it('finds a client key, RSA as a JWK (d, p, q, dp, dq, qi) and as PKCS#8 PEM, printed or JSON-escaped, and not its public members', async () => {
    const { privateKey } = await globalThis.crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
      true,
      ['sign', 'verify'],
    );
    const jwk = await globalThis.crypto.subtle.exportKey('jwk', privateKey);
    const members = (['d', 'p', 'q', 'dp', 'dq', 'qi'] as const).map((member) => jwk[member]!);
    for (const text of [JSON.stringify(jwk), inspect(jwk)])
      expect(tokenShapedIn(text).map(({ value }) => value)).toEqual(members);
    const der = Buffer.from(await globalThis.crypto.subtle.exportKey('pkcs8', privateKey)).toString('base64');
    const lines = der.match(/.{1,64}/g)!;
    const pem = `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
    for (const text of [`key: ${pem}`, JSON.stringify({ detail: pem })])
      expect(tokenShapedIn(text).map(({ value }) => value)).toEqual(lines.filter((line) => line.length >= 16));
    expect(tokenShapedIn(JSON.stringify({ kty: jwk.kty, n: jwk.n, e: jwk.e }))).toEqual([]);
  });
});

describe('secretsAtRest, for what a store keeps', () => {
  const token: Secret = { name: 'refresh token', value: EMULATOR_REFRESH };
  const record = (pair: object) => JSON.stringify({ version: 1, fence: 3, pair });

  it.each<[string, string | Buffer]>([
    ['as it is, in a record', record({ access: 'x', refresh: EMULATOR_REFRESH })],
    ['JSON-escaped, within a JSON string', JSON.stringify(record({ refresh: EMULATOR_REFRESH }))],
    ['in hex', Buffer.from(EMULATOR_REFRESH).toString('hex')],
    ['in upper-case hex', `0x${Buffer.from(EMULATOR_REFRESH).toString('hex').toUpperCase()}`],
    ['in Base64, alone', Buffer.from(EMULATOR_REFRESH).toString('base64')],
    ['in Base64url, alone', Buffer.from(EMULATOR_REFRESH).toString('base64url')],
    ...[0, 1, 2, 3, 4, 5].map((offset): [string, string] => [
      `within a record in Base64, ${offset} bytes in`,
      Buffer.from(`${'x'.repeat(offset)}${record({ refresh: EMULATOR_REFRESH })}`).toString('base64'),
    ]),
    ['within a record in Base64url', Buffer.from(`{"a":1,"r":"${EMULATOR_REFRESH}"}`).toString('base64url')],
    ['as raw bytes', Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(EMULATOR_REFRESH), Buffer.from([255])])],
  ])('finds a token %s', (_how, bytes) => {
    const found = secretsAtRest([{ where: 'the key', bytes }], [token]);
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]).toMatch(/^the key: refresh token/);
    expect(found.join('\n')).not.toContain(EMULATOR_REFRESH.slice(0, 8));
  });

  it('finds nothing in a sealed record, nor in a token of the same shape that is another', () => {
    const sealed = record({ sealed: `v1.k1.${Buffer.alloc(12, 9).toString('base64url')}.${'QmFzZTY0'.repeat(12)}` });
    const other = `ref_${'fedcba9876543210'.repeat(3)}`;
    expect(
      secretsAtRest(
        [
          { where: 'the key', bytes: sealed },
          { where: 'b', bytes: other },
        ],
        [token],
      ),
    ).toEqual([]);
  });
});

describe('findLeaks, with `reachable`, finds what no logger prints', () => {
  const secret: Secret = { name: 'test secret', value: 'sekret-0042' };
  const { value } = secret;
  const paths = (findings: Finding[]) => findings.flatMap((finding) => finding.paths);

  it.each<[string, () => unknown]>([
    [
      'a non-enumerable property',
      () => Object.defineProperty({}, 'hidden', { value: `x${value}x`, enumerable: false }),
    ],
    ['a symbol key', () => ({ [Symbol('kOutHeaders')]: { authorization: ['Authorization', `Bearer ${value}`] } })],
    ['a Map value', () => ({ map: new Map([['a', { deep: [value] }]]) })],
    ['a Set', () => new Set([1, `${value}`])],
    ['AxiosHeaders', () => ({ headers: new AxiosHeaders({ Authorization: `Bearer ${value}` }) })],
    ['an Error cause', () => new Error('outer', { cause: new Error(`inner ${value}`) })],
    ['a Buffer', () => ({ body: Buffer.from(`{"refresh_token":"${value}"}`) })],
    ['a getter', () => Object.defineProperty({}, 'lazy', { get: () => value, enumerable: false })],
  ])('finds a secret in %s by walking the value itself', (_where, make) => {
    expect(paths(findLeaks(make(), [secret], { reachable: true })).length).toBeGreaterThan(0);
  });

  it('survives cycles and reports the path', () => {
    const looped: Record<string, unknown> = { config: { headers: { Authorization: `Bearer ${value}` } } };
    looped.self = looped;

    const findings = findLeaks(looped, [secret], { reachable: true });

    expect(paths(findings)).toContain('<value>.config.headers.Authorization');
    expectNoLeaks({ self: looped, clean: 'nothing here' }, [{ name: 'absent', value: 'absent' }]);
  });

  it('finds what only a serialiser shows (a toJSON)', () => {
    const findings = findLeaks({ toJSON: () => ({ leaked: value }) }, [secret], { reachable: true });
    expect(findings.map((finding) => [finding.seenIn, finding.paths])).toEqual([[['JSON.stringify(<value>)'], []]]);
  });
});

describe('the setup file', () => {
  it('searches for the credentials the helpers define', () => {
    expect(KNOWN_CREDENTIALS).toEqual(
      expect.arrayContaining([
        [USERNAME, PASSWORD],
        [E2E_USER, E2E_PASSWORD],
      ]),
    );
  });

  it('counts a rejection as the plugin’s only when it is a TokenAuthError or its config bears the plugin’s mark', () => {
    const plain = new AxiosError('Request failed', 'ERR_BAD_REQUEST', {
      headers: new AxiosHeaders(),
      [Symbol('another-plugin.state')]: {},
    } as never);
    const marked = new AxiosError('Request failed', 'ERR_BAD_REQUEST', {
      headers: new AxiosHeaders(),
      [Symbol('axios-token-keeper.ticket')]: {},
    } as never);

    expect(isPluginRejection(plain)).toBe(false);
    expect(isPluginRejection(marked)).toBe(true);
    expect(isPluginRejection(new TokenAuthError('LOGIN_REJECTED', 'rejected'))).toBe(true);
    expect(isPluginRejection(new Error('other'))).toBe(false);
  });

  it('records the plugin’s events and the rejections of attached instances, not those of plain instances', async () => {
    const { service, api } = rig();
    service.alwaysUnauthorized.add('/forbidden');
    const before = scanRecords().length;

    await api.get('/orders');
    const refused = await api.get('/forbidden').catch((error: unknown) => error);
    const plain = await axios
      .create({ baseURL: service.dataBase })
      .get('/forbidden')
      .catch((error: unknown) => error);

    // getState()'s notices of a change are recorded too; they carry nothing (the state is read with getState()).
    const recorded = scanRecords()
      .slice(before)
      .filter((entry) => entry.labels[0] !== 'event "change"' || entry.value !== undefined);
    expect(recorded.map((entry) => entry.labels[0])).toEqual([
      'event "login"',
      'event "refresh"',
      'event "replay"',
      'GET request rejected with AxiosError ERR_BAD_REQUEST',
    ]);
    expect(recorded[3]!.value).toBe(refused);
    expect(recorded.some((entry) => entry.value === plain)).toBe(false);
  });
});
