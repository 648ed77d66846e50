// The bridge of Upstash's REST protocol (harness/upstash-rest.ts) with the real @upstash/redis client over a real
// redis-server: what the client sends (one command, a pipeline, a transaction, automatic pipelining, EVALSHA falling
// back to EVAL) comes back as the client expects it, Base64 or not, and a wrong token is refused.
import { Redis } from '@upstash/redis';
import { upstashBridgeForFile } from './helpers/redis.js';

const { redis, bridge } = upstashBridgeForFile();
beforeEach(async () => {
  await redis().flushall();
  bridge().resetCounts();
});

/** The client as users make it, at its defaults (Base64 responses, automatic pipelining), with no retries to wait on. */
const client = (options: { responseEncoding?: false; enableAutoPipelining?: boolean; token?: string } = {}) =>
  new Redis({
    url: bridge().url,
    token: options.token ?? bridge().token,
    retry: false,
    enableTelemetry: false,
    ...(options.responseEncoding === false && { responseEncoding: false as const }),
    ...(options.enableAutoPipelining !== undefined && { enableAutoPipelining: options.enableAutoPipelining }),
  });

describe.each([
  ['Base64 responses (the default)', {}],
  ['plain responses', { responseEncoding: false as const }],
])('the bridge, with %s', (_label, encoding) => {
  it('runs one command per request, in Redis, and gives its reply back as the client expects it', async () => {
    const upstash = client({ ...encoding, enableAutoPipelining: false });
    expect(await upstash.set('greeting', 'grüß dich 🙂 {"a":1}')).toBe('OK');
    expect(await redis().get('greeting')).toBe('grüß dich 🙂 {"a":1}');
    expect(await upstash.get('greeting')).toEqual('grüß dich 🙂 {"a":1}');
    expect(await upstash.incr('counter')).toBe(1);
    // Text that is Base64 itself reads back as it was only when the bridge encodes exactly when asked.
    await upstash.set('plain', 'abcd');
    expect(await upstash.get('plain')).toBe('abcd');
    expect(await upstash.get('missing')).toBeNull();
    expect(await upstash.eval("return {1, 'two', redis.call('GET', KEYS[1])}", ['greeting'], [])).toEqual([
      1,
      'two',
      'grüß dich 🙂 {"a":1}',
    ]);
    expect(bridge().counts()).toMatchObject({ requests: 7, commands: 7 });
    expect(bridge().counts().byCommand.get('eval')).toBe(1);
  });

  it('runs a pipeline in order, in one request, with each command its own outcome', async () => {
    const upstash = client(encoding);
    const results = await upstash.pipeline().set('a', 'one').get('a').incr('n').get('none').exec();
    expect(results).toEqual(['OK', 'one', 1, null]);
    expect(bridge().counts()).toMatchObject({ requests: 1, commands: 4 });
    // An error is that command's, and the others ran (a pipeline is not a transaction).
    await expect(upstash.pipeline().set('b', 'x').incr('b').set('c', 'y').exec()).rejects.toThrow(/not an integer/);
    expect(await redis().mget('b', 'c')).toEqual(['x', 'y']);
  });

  it('runs a transaction as MULTI … EXEC: each command queued, run together', async () => {
    const upstash = client(encoding);
    expect(await upstash.multi().set('t', 'v').get('t').incr('m').exec()).toEqual(['OK', 'v', 1]);
    expect(bridge().counts()).toMatchObject({ requests: 1, commands: 3 });
  });
});

it('answers the writes made in one tick, with automatic pipelining (the default), in one request, and the reads in another', async () => {
  const upstash = client();
  const writes = await Promise.all([upstash.set('k1', 'v1'), upstash.set('k2', 'v2'), upstash.incr('n')]);
  expect(writes).toEqual(['OK', 'OK', 1]);
  expect(bridge().counts()).toMatchObject({ requests: 1, commands: 3 });
  bridge().resetCounts();
  const mixed = await Promise.all([upstash.get('k1'), upstash.set('k3', 'v3'), upstash.get('k2')]);
  expect(mixed).toEqual(['v1', 'OK', 'v2']);
  expect(bridge().counts()).toMatchObject({ requests: 2, commands: 3 });
});

it('runs a script by EVALSHA, falling back to EVAL once when Redis does not know it yet', async () => {
  const upstash = client({ enableAutoPipelining: false });
  const script = upstash.createScript<string>("return redis.call('GET', KEYS[1]) .. ARGV[1]");
  await upstash.set('base', 'x');
  expect(await script.exec(['base'], ['-1'])).toBe('x-1');
  expect(await script.exec(['base'], ['-2'])).toBe('x-2');
  // The first EVALSHA met NOSCRIPT and went again as EVAL, which loaded it; the second was an EVALSHA alone.
  expect(bridge().counts().byCommand).toEqual(
    new Map([
      ['set', 1],
      ['evalsha', 2],
      ['eval', 1],
    ]),
  );
});

it('refuses a request without the bearer token, 401, running nothing', async () => {
  const wrong = client({ token: 'not-the-token', enableAutoPipelining: false });
  await expect(wrong.set('x', '1')).rejects.toThrow(/Unauthorized/);
  const anonymous = await fetch(`${bridge().url}/`, { method: 'POST', body: JSON.stringify(['SET', 'x', '1']) });
  expect(anonymous.status).toBe(401);
  expect(await redis().exists('x')).toBe(0);
  expect(bridge().counts()).toMatchObject({ requests: 0, commands: 0, unauthorized: 2 });
});

it("answers a command Redis refuses with 400 and Redis' error", async () => {
  const response = await fetch(`${bridge().url}/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bridge().token}` },
    body: JSON.stringify(['NOSUCHCOMMAND', 'x']),
  });
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error?: unknown };
  expect(body.error).toMatch(/^ERR unknown command/);
});
