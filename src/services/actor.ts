/**
 * Who a service call acts for: the account whose records it reads and writes (every lookup is
 * scoped to it, so another account's id reads as missing), and the request id its log lines carry.
 * The API builds one from the token's account; the dashboard from the session's.
 */
export interface Actor {
  accountId: number;
  requestId: string;
}
