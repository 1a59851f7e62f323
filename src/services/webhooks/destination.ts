// Where a webhook may send (CONTRACT §4.12): no loopback, private, link-local, CGNAT or unspecified address, checked at create and on every connection.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ApiError } from '../../errors.ts';

/**
 * The ranges refused unless WEBHOOK_ALLOW_PRIVATE: loopback, "this network" (0.0.0.0/8, which Linux routes
 * to the host itself), RFC 1918, CGNAT, link-local (cloud metadata at 169.254.169.254 included), and their
 * IPv6 counterparts: ::1, ::, unique local fc00::/7, link-local fe80::/10.
 */
const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet('127.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('0.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('10.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('172.16.0.0', 12, 'ipv4');
FORBIDDEN.addSubnet('192.168.0.0', 16, 'ipv4');
FORBIDDEN.addSubnet('100.64.0.0', 10, 'ipv4');
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4');
FORBIDDEN.addAddress('::1', 'ipv6');
FORBIDDEN.addAddress('::', 'ipv6');
FORBIDDEN.addSubnet('fc00::', 7, 'ipv6');
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6');

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) carries, or null. */
function mappedIPv4(address: string): string | null {
  // The URL parser writes every IPv6 address in one canonical form: `[::ffff:7f00:1]` for both spellings.
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const match = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!match?.[1] || !match[2]) return null;
  const high = parseInt(match[1], 16);
  const low = parseInt(match[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Whether a connection to this IP address (v4 or v6) would reach a destination CONTRACT §4.12 refuses. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return FORBIDDEN.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = mappedIPv4(address);
  return v4 !== null ? FORBIDDEN.check(v4, 'ipv4') : FORBIDDEN.check(address, 'ipv6');
}

/** The host of a URL as a resolver or a socket takes it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** An attempt's connection would have gone to a refused address: the attempt fails with `destination not allowed`. */
export class DestinationNotAllowedError extends Error {
  override name = 'DestinationNotAllowedError';
  readonly code = 'ERR_WEBHOOK_DESTINATION_NOT_ALLOWED';
  constructor(host: string) {
    super(`webhook destination not allowed: ${host}`);
  }
}

/** Resolves a host name to every address it has (the system resolver, as a connection would). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/**
 * The check at create and update: a host that is, or resolves to, a refused address → 400/2000. A name that
 * does not resolve now is accepted (it may be registered later); whatever it resolves to then is checked when
 * each attempt connects, which is the check that counts (DNS answers change).
 */
export async function assertDestinationAllowed(url: string, opts: { allowPrivate: boolean; resolve?: Resolver }): Promise<void> {
  if (opts.allowPrivate) return;
  const host = hostOf(new URL(url));
  if (isIP(host) !== 0) {
    if (isForbiddenAddress(host)) throw ApiError.validation('webhook destination not allowed');
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await (opts.resolve ?? systemResolver)(host);
  } catch {
    return;
  }
  if (addresses.some((a) => isForbiddenAddress(a.address))) throw ApiError.validation('webhook destination not allowed');
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect / tls.connect that refuses a name resolving to any refused address, so the
 * check is made on the addresses the socket is about to connect to (a DNS answer that changed since the
 * webhook was created — rebinding — gets no further). Node calls it with `all: true` when it may try
 * several addresses (autoSelectFamily), and without for a single one; both are answered.
 */
export function guardedLookup(resolve: Resolver = systemResolver): LookupFunction {
  return (hostname: string, options: LookupOptions | LookupAllOptions, callback: LookupCallback) => {
    resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (addresses.some((a) => isForbiddenAddress(a.address))) {
          callback(new DestinationNotAllowedError(hostname), []);
          return;
        }
        const first = wanted[0];
        if (!first) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
          return;
        }
        if (options.all === true) callback(null, wanted);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), []),
    );
  };
}
