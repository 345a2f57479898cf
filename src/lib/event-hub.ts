/**
 * A small typed publish/subscribe hub. Writers (API handlers, the engine) announce what changed;
 * long-running parts (scheduler, heartbeat timers, peers feed, dashboard SSE) listen. Listeners run
 * synchronously and must not throw; a throwing listener is reported and the rest still run.
 */
export type Listener<T> = (payload: T) => void;

export class EventHub<Events extends Record<string, unknown>> {
  private listeners = new Map<keyof Events, Set<Listener<never>>>();
  constructor(private onListenerError: (event: string, err: unknown) => void = () => {}) {}

  on<K extends keyof Events>(event: K, fn: Listener<Events[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as Listener<never>);
    return () => set!.delete(fn as Listener<never>);
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const fn of set) {
      try {
        (fn as Listener<Events[K]>)(payload);
      } catch (err) {
        this.onListenerError(String(event), err);
      }
    }
  }
}
