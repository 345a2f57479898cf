import FeedParser from "feedparser";
import { Readable } from "node:stream";

export interface ParsedFeed {
  meta: Record<string, any>;
  items: Record<string, any>[];
}

/** The feed as feedparser reads it: strict XML, the first XML error fails the parse; relative links resolved against `feedurl`. */
export function parseFeed(xml: string, feedurl: string): Promise<ParsedFeed> {
  return new Promise((resolve, reject) => {
    const parser = new FeedParser({ strict: true, resume_saxerror: false, feedurl } as FeedParser.Options);
    const items: Record<string, any>[] = [];
    parser.on("error", reject);
    parser.on("readable", () => {
      for (let item = parser.read(); item; item = parser.read()) items.push(item);
    });
    parser.on("end", () => resolve({ meta: parser.meta as Record<string, any>, items }));
    Readable.from([xml]).pipe(parser);
  });
}
