// Whether a browser request comes from another site (CONTRACT §3.7): its Origin, or else its Sec-Fetch-Site.
import type { RequestSite } from '../../contracts/actor.ts';

/** An origin in the form browsers send it (scheme, host, port only when not the default), or null for `null` and garbage. */
function normalised(origin: string): string | null {
  return URL.canParse(origin) ? new URL(origin).origin : null;
}

/**
 * True when the request names an origin that is neither one of `own` (PUBLIC_URL's, the listed CORS origins)
 * nor the one it was sent to, `Origin: null` included; or, without an Origin, when Sec-Fetch-Site says
 * `cross-site`. A request with neither header is not from a browser that would add the victim's cookies.
 * The target counts as our own so the dashboard works at whatever address it is opened (127.0.0.1 or
 * localhost) without PUBLIC_URL naming it; a page of another site cannot make its browser send our Host.
 */
export function isCrossSite(site: RequestSite | undefined, own: readonly string[]): boolean {
  if (site === undefined) return false;
  if (site.origin === undefined) return site.fetchSite === 'cross-site';
  const origin = normalised(site.origin);
  if (origin === null) return true;
  return ![site.target, ...own].some((candidate) => normalised(candidate) === origin);
}
