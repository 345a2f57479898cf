/**
 * Whether an account's checks and notifications may reach private, loopback and link-local
 * addresses (README, Security). Each account may say so itself (`vigil account create/update
 * --block-private-targets | --allow-private-targets`); an account that says nothing follows the
 * instance's --block-private-targets. The accounts table is read again every few seconds, so a change
 * made by the CLI beside a running server takes effect without a restart; checks ask synchronously,
 * on their hot path, from the last reading.
 */
import type { Db } from "../store/database.ts";
import { privateTargetSettings, type PrivateTargetSetting } from "../store/accounts.ts";

/** How stale the cached settings may get before the next question triggers a reload. */
export const POLICY_REFRESH_MS = 5_000;

export class PrivateTargetPolicy {
  private settings = new Map<number, PrivateTargetSetting>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | null = null;
  private listeners: ((accountIds: number[]) => void)[] = [];

  constructor(
    private readonly db: Db,
    readonly instanceDefault: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads every account's setting now. */
  async reload(): Promise<void> {
    this.loading ??= privateTargetSettings(this.db)
      .then((s) => {
        const first = this.loadedAt === -Infinity;
        const before = this.settings;
        this.settings = s;
        this.loadedAt = this.now();
        if (first) return;
        const effective = (m: Map<number, PrivateTargetSetting>, id: number) => m.get(id) ?? this.instanceDefault;
        const changed = [...s.keys()].filter((id) => before.has(id) && effective(before, id) !== effective(s, id));
        if (changed.length) for (const l of this.listeners) l(changed);
      })
      .finally(() => (this.loading = null));
    return this.loading;
  }

  /** From the last reading (a stale one starts a reload in the background). */
  blocks(accountId: number): boolean {
    if (this.now() - this.loadedAt > POLICY_REFRESH_MS) void this.reload().catch(() => {});
    return this.settings.get(accountId) ?? this.instanceDefault;
  }

  /** Reads first when the account is unknown or the reading is stale: for writes, which can wait. */
  async blocksNow(accountId: number): Promise<boolean> {
    if (!this.settings.has(accountId) || this.now() - this.loadedAt > POLICY_REFRESH_MS) await this.reload();
    return this.settings.get(accountId) ?? this.instanceDefault;
  }

  /** Called with the accounts whose rule changed between two readings (a CLI update). */
  onChange(listener: (accountIds: number[]) => void): void {
    this.listeners.push(listener);
  }

  /** The account's own setting, for listings: null when it follows the instance. */
  setting(accountId: number): PrivateTargetSetting {
    return this.settings.get(accountId) ?? null;
  }
}
