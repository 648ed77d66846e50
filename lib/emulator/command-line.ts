// The command line of the emulator's command (and of this repository's `npm start`): --help, and a mistake named in
// one line above the usage instead of util.parseArgs' stack trace. Node only, like the emulator.
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** A mistake in the command: a flag or a value that cannot be used. Its message is the one line that names it. */
export class UsageError extends Error {}

type Strict<O extends ParseArgsOptionsConfig> = { args: string[]; options: O; strict: true; allowPositionals: false };

/** The values of a command's flags, typed by their declaration, defaults applied. */
export type Flags<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<Strict<O>>>['values'];

function readFlags<O extends ParseArgsOptionsConfig>(options: O, args: string[]): Flags<O> {
  return parseArgs<Strict<O>>({ args, options, strict: true, allowPositionals: false }).values;
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * Reads a command's flags, or undefined when they ask for help. A mistake (an unknown flag, a missing value, a
 * value given to a switch, an argument no flag takes) throws a UsageError whose message names it.
 */
export function readCommandLine<O extends ParseArgsOptionsConfig>(options: O, args: string[]): Flags<O> | undefined {
  const known: ParseArgsOptionsConfig = { ...options, help: { type: 'boolean', short: 'h' } };
  // Not strict, so that every token comes back and the mistake is named here, as a newcomer can read it.
  const { tokens } = parseArgs({ args, options: known, strict: false, allowPositionals: true, tokens: true });
  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) return undefined;
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument "${token.value}"`);
    if (token.kind !== 'option') continue;
    const option = known[token.name];
    if (!option) {
      const near = Object.keys(options).find((name) => distance(name, token.name) <= 2);
      throw new UsageError(`unknown option ${token.rawName}${near ? ` (did you mean --${near}?)` : ''}`);
    }
    if (option.type === 'boolean' && token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`);
    // Without strict, `--port --host x` would read "--host" as the port.
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))))
      throw new UsageError(`${token.rawName} needs a value`);
  }
  return readFlags(options, args);
}

/**
 * Runs a command. `--help` prints its usage and exits 0. A mistake in the flags, or a UsageError thrown by `main`
 * while it reads their values, prints one line that names it, then the usage, and exits 2. Any other failure prints
 * its message and exits 1. Otherwise the process exits with the code `main` returns, or keeps running if it
 * returns none (a server).
 */
export function runCommand<O extends ParseArgsOptionsConfig>(
  usage: string,
  options: O,
  main: (flags: Flags<O>) => Promise<number | void>,
  args = process.argv.slice(2),
): void {
  new Promise<number | void>((resolve) => {
    const flags = readCommandLine(options, args);
    if (flags) resolve(main(flags));
    else {
      process.stdout.write(usage);
      resolve(0);
    }
  }).then(
    (code) => {
      if (code !== undefined) process.exit(code);
    },
    (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(error instanceof UsageError ? `${message}\n\n${usage}` : `${message}\n`);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}
