import nodemailer from "nodemailer";
import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { logWriteFailure } from "../lib/storage-errors.ts";
import { changesNotice, updateNotice } from "../domain/status-mail.ts";
import { dueMail, mailFailed, mailSent, queueChangeMail, queueUpdateMail } from "../store/status-subscriptions.ts";

const BATCH = 20;
const MAX_ATTEMPTS = 8;

/**
 * Sends status page subscription mail through --smtp-url (README "Email subscriptions"). Each pass
 * first turns what is owed into mail rows: updates written by people once published (and again at
 * each new incident status), and a page's incident changes once the oldest is --status-mail-period
 * old, all of them in one mail per subscriber (a flapping monitor sends one, with its latest state).
 * Then it sends what is due in status_mail_queue, oldest first; a row is deleted once the server
 * took it, so mail queued before a restart goes out after it. A refusal is tried again later (30 s,
 * doubling, at most an hour apart), and given up after MAX_ATTEMPTS. Notices carry
 * List-Unsubscribe and List-Unsubscribe-Post (RFC 8058), so a mail client's unsubscribe button
 * works in one click.
 */
export async function startStatusMailer(ctx: AppContext, o: { pollMs?: number } = {}): Promise<Service> {
  const smtpUrl = ctx.config.smtpUrl!;
  const pollMs = o.pollMs ?? 1000;
  const log = ctx.log.child("status-mail");
  const transport = nodemailer.createTransport(smtpUrl);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const pass = async () => {
    const now = ctx.clock.now();
    const base = ctx.config.baseUrl;
    await queueUpdateMail(ctx.db, { now, base, limit: BATCH, words: (u, previous) => updateNotice(u.page_name, u, `${base}/s/${u.page_slug}`, previous) });
    await queueChangeMail(ctx.db, { dueBy: now - ctx.config.statusMailPeriodMs, now, base, words: changesNotice });
    for (const m of await dueMail(ctx.db, now, BATCH)) {
      if (stopped) return;
      const text = m.kind === "confirm" ? m.body.replace("{link}", m.link) : `${m.body}\n\n--\nUnsubscribe: ${m.link}\n`;
      const headers = m.kind === "confirm" ? {} : { "List-Unsubscribe": `<${m.link}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" };
      try {
        await transport.sendMail({ from: ctx.config.smtpFrom, to: m.email, subject: m.subject, text, headers });
        await mailSent(ctx.db, m.id);
      } catch (err) {
        const attempts = m.attempts + 1;
        const next = attempts >= MAX_ATTEMPTS ? null : now + Math.min(3600_000, 30_000 * 2 ** (attempts - 1));
        log.warn(next === null ? "status mail given up" : "status mail refused, tried again later", { mail_id: m.id, attempts, error: String((err as Error).message ?? err).slice(0, 300) });
        await mailFailed(ctx.db, m.id, next);
      }
    }
  };
  let running: Promise<void> = Promise.resolve();
  const loop = async () => {
    timer = null;
    try {
      await pass();
    } catch (err) {
      if (!stopped) logWriteFailure(log, "status mail pass failed", err);
    }
    if (!stopped) timer = setTimeout(() => void (running = loop()), pollMs);
  };
  timer = setTimeout(() => void (running = loop()), 0);
  log.info("status page subscription mail started");
  return {
    name: "status-mail",
    async stop(deadlineMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await Promise.race([running, Bun.sleep(deadlineMs)]);
      transport.close();
    },
  };
}
