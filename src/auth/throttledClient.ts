/**
 * The client a failed login is counted against. An IPv6 host is given a whole /64 (2^64
 * addresses) and can send every guess from another one, so IPv6 addresses count by their /64
 * prefix; an IPv4 address seen through a dual-stack socket (::ffff:a.b.c.d) counts as itself.
 * Several hosts behind one /64 share its budget, as hosts behind one NAT share an IPv4 address.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or null. */
function groupsOf(address: string): number[] | null {
  const bare = address.split('%')[0] ?? '';
  if (!isIPv6(bare)) return null;
  let text = bare.toLowerCase();
  // A dotted IPv4 tail is two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const octets = (dotted[2] ?? '').split('.').map(Number);
    const [a = 0, b = 0, c = 0, d = 0] = octets;
    text = `${dotted[1] ?? ''}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array.from({ length: tail === undefined ? 0 : missing }, () => '0'), ...right].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The throttling key of a client address: IPv6 by /64, IPv4 (mapped or not) as is; undefined stays undefined. */
export function throttledClient(address: string | undefined): string | undefined {
  if (address === undefined || isIPv4(address)) return address;
  const groups = groupsOf(address);
  if (groups === null) return address;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
