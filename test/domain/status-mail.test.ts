import { describe, expect, test } from "bun:test";
import { changesNotice, updateNotice, type NotedChange } from "../../src/domain/status-mail.ts";

const at = (hhmm: string) => Date.parse(`2026-11-24T${hhmm}:00Z`);
const change = (monitorId: number, name: string, time: string, isDown: boolean): NotedChange => ({ monitorId, name, at: at(time), isDown });

describe("the mail of a page's incident changes", () => {
  test("each monitor once, with its latest state and how often it went down", () => {
    const n = changesNotice([
      change(1, "Backups", "10:00", true),
      change(1, "Backups", "10:01", false),
      change(1, "Backups", "10:02", true),
      change(2, "Shop", "10:01", false),
    ]);
    expect(n.subject).toBe("[{page}] Backups down, Shop back up");
    expect(n.body).toBe(
      "Backups is down since 2026-11-24 10:02 UTC. It went down 2 times since 2026-11-24 10:00 UTC.\n" +
        "Shop works again since 2026-11-24 10:01 UTC.\n\nWe will write again when this changes.",
    );
  });

  test("one monitor names itself in the subject; one that came back says how often it was down", () => {
    const n = changesNotice([change(3, "API", "09:00", true), change(3, "API", "09:03", false)]);
    expect(n.subject).toBe("[{page}] API is back up");
    expect(n.body).toBe("API works again since 2026-11-24 09:03 UTC. It went down once since 2026-11-24 09:00 UTC.\n\nEverything named here works again.");
  });

  test("more than three monitors: the subject names three and counts the rest", () => {
    const n = changesNotice(["A", "B", "C", "D", "E"].map((name, i) => change(i + 1, name, "08:00", true)));
    expect(n.subject).toBe("[{page}] A down, B down, C down and 2 more");
  });
});

describe("the mail of an update written by people", () => {
  const u = { title: "Slow database", kind: "incident", status: "identified", body: "The disk is full." };
  test("a new one, and a status step saying what it was", () => {
    expect(updateNotice("Acme", u, "https://x/s/acme")).toEqual({ subject: "[Acme] Incident (identified): Slow database", body: "Slow database (identified)\n\nThe disk is full.\n\nThe status page: https://x/s/acme" });
    expect(updateNotice("Acme", u, "https://x/s/acme", "investigating").body).toStartWith("Status: identified (was investigating)\n\nSlow database (identified)");
  });
});
