/** Minimal typing for the parts of `dns-packet` (v5, no bundled types) that Vigil uses. */
declare module "dns-packet" {
  export interface Question { type: string; name: string; class?: string }
  export interface Answer { type: string; name: string; class?: string; ttl?: number; data?: unknown; flush?: boolean }
  export interface Packet {
    type?: "query" | "response";
    id?: number;
    flags?: number;
    flag_tc?: boolean;
    rcode?: string;
    questions?: Question[];
    answers?: Answer[];
    authorities?: Answer[];
    additionals?: Answer[];
  }
  export const RECURSION_DESIRED: number;
  export const RECURSION_AVAILABLE: number;
  export const TRUNCATED_RESPONSE: number;
  export const AUTHORITATIVE_ANSWER: number;
  export function encode(packet: Packet): Buffer;
  export function decode(buf: Buffer): Packet;
  export function streamEncode(packet: Packet): Buffer;
  export function streamDecode(buf: Buffer): Packet;
  const _default: {
    RECURSION_DESIRED: number; RECURSION_AVAILABLE: number; TRUNCATED_RESPONSE: number; AUTHORITATIVE_ANSWER: number;
    encode: typeof encode; decode: typeof decode; streamEncode: typeof streamEncode; streamDecode: typeof streamDecode;
  };
  export default _default;
}
