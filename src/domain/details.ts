/**
 * Validation details: attribute name → messages. Attribute names come from request bodies, so the
 * map has no prototype: a body key such as "__proto__" or "toString" is an ordinary entry here,
 * never an inherited property (which would throw, or pollute Object.prototype).
 */
export type Details = Record<string, string[]>;

export function newDetails(): Details {
  return Object.create(null) as Details;
}
