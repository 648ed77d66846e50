// The option checks of the stores: every name once, and each value's kind, named in the message.

/**
 * Every option name of a store, each once: a new option that is not listed here fails to compile, instead of being
 * refused as unknown at run time.
 */
export type OptionNames<Options> = { readonly [Name in keyof Options]-?: true };

/**
 * Checks the options of a store, naming the option that is wrong: no option it does not know, and positive
 * milliseconds for every option whose name ends in `Ms`.
 */
export function checkStoreOptions(
  store: string,
  options: unknown,
  names: Readonly<Record<string, true>>,
): Record<string, unknown> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${store}: the options must be an object, such as { lockTtlMs: 10_000 }; got ${shown(options)}.`,
    );
  }
  const known = Object.keys(names);
  for (const name of Object.keys(options)) {
    if (!known.includes(name))
      throw new TypeError(
        `${store}: unknown option \`${name}\`; the options are ${known.map((k) => `\`${k}\``).join(', ')}.`,
      );
  }
  const given = options as Record<string, unknown>;
  for (const name of known.filter((each) => each.endsWith('Ms'))) {
    const value = given[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)) {
      throw new TypeError(`${store}: \`${name}\` must be a positive number of milliseconds; got ${shown(value)}.`);
    }
  }
  const ttl = given['lockTtlMs'];
  if (typeof ttl === 'number' && ttl < 1_000) {
    throw new TypeError(
      `${store}: \`lockTtlMs\` must be at least 1000, so that a live holder can extend its lease in time; got ${ttl}.`,
    );
  }
  return given;
}

/** A value as an error message shows it: a string in quotes, so that "false" and false differ. */
export function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
