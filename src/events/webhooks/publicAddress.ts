import { BlockList, isIP } from 'node:net';

/**
 * Addresses that are not globally reachable (IANA special-purpose registries): loopback, private, shared, link-local
 * (cloud metadata at 169.254.169.254 and fd00:ec2::254), unique-local, documentation, multicast, reserved, and the
 * IPv6 forms that embed an IPv4 one (6to4, NAT64). A callback may resolve to none of them (spec V98).
 */
const NOT_GLOBAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_GLOBAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 127], // :: and ::1
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_GLOBAL.addSubnet(net, prefix, 'ipv6');

/** True when `address` (an IP literal) is globally routable; an IPv4-mapped IPv6 address is judged as its IPv4. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? (mapped[1] as string) : address;
  const family = isIP(ip);
  if (family === 0) return false;
  return !NOT_GLOBAL.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
