import { expect, test } from "bun:test";
import { addressBlock } from "../../src/lib/address-block.ts";

test.each([
  ["203.0.113.7", "203.0.113.7"],
  ["2001:db8:1:2::99", "2001:db8:1:2::/64"],
  ["2001:0db8:0001:0002:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
  ["2001:db8:1:3::1", "2001:db8:1:3::/64"],
  ["::ffff:198.51.100.4", "198.51.100.4"],
  ["::1", "0:0:0:0::/64"],
  ["unknown", "unknown"],
  ["zz::zz", "zz::zz"],
])("%s is limited as %s", (ip, block) => {
  expect(addressBlock(ip)).toBe(block);
});
