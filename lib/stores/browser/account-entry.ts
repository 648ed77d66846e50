/**
 * The account's record as the tabs share it: in `localStorage` (or in this tab alone where the browser blocks it),
 * stored with the fence it was written under, and told over the channel as it is written. A tab granted the lock can
 * read `localStorage` before another tab's last write has reached it (seen in Chromium, in about one handoff of four
 * under load); the fence lets it wait for that write, and the message brings it sooner than storage does.
 */
export class AccountEntry {
  /** The newest record this tab wrote or was told, with its fence. */
  private latest: { fence: number; text: string } | undefined;

  constructor(
    private readonly storage: Storage | undefined,
    readonly key: string,
  ) {}

  /** The newest record this tab can see, as it was written (its fence left out), or undefined. */
  read(): unknown {
    const stored = this.stored();
    const latest = this.latest;
    const text = stored && !(latest && latest.fence > stored.fence) ? stored.text : latest?.text;
    if (!text) return undefined;
    try {
      const record = JSON.parse(text) as Record<string, unknown>;
      delete record.fence;
      return record;
    } catch {
      return undefined;
    }
  }

  /** The fence of the newest record this tab can see (0 for none, or one stored before records had fences). */
  get fence(): number {
    return Math.max(this.stored()?.fence ?? 0, this.latest?.fence ?? 0);
  }

  /** Keeps `record` (plain JSON data) as written under `fence`; returns the text to tell the other tabs. */
  write(record: object, fence: number): string {
    const text = JSON.stringify({ ...record, fence });
    this.latest = { fence, text };
    this.storage?.setItem(this.key, text);
    return text;
  }

  /** Another tab told of a record it wrote: kept when newer than what this tab knows. */
  told(fence: number, text: string): void {
    if (!this.latest || fence > this.latest.fence) this.latest = { fence, text };
  }

  private stored(): { fence: number; text: string } | undefined {
    const text = this.storage?.getItem(this.key);
    if (!text) return undefined;
    return { fence: fenceIn(text), text };
  }
}

/** The fence a stored record was written under; 0 for a record written before records had fences, or not JSON. */
function fenceIn(text: string): number {
  try {
    const { fence } = JSON.parse(text) as { fence?: unknown };
    return typeof fence === 'number' && Number.isFinite(fence) ? fence : 0;
  } catch {
    return 0;
  }
}
