import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { AlertDispatcher, type DispatcherOptions } from "./dispatcher.ts";

/** The alert dispatcher as a Service: started with the leader, stopped after the producers of alerts. */
export async function startNotifyService(ctx: AppContext, opts: DispatcherOptions = {}): Promise<Service & { dispatcher: AlertDispatcher }> {
  const dispatcher = new AlertDispatcher(ctx, opts);
  await dispatcher.start();
  return { name: "notify", dispatcher, stop: (deadlineMs) => dispatcher.stop(deadlineMs) };
}
