// The browser location as Preact state: history-API navigation without reloads, and links that use it.
import { createElement, type ComponentChildren, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export type Location = { path: string; search: string };

const listeners = new Set<() => void>();
const current = (): Location => ({ path: window.location.pathname, search: window.location.search });

window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  for (const l of listeners) l();
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    update();
    return () => void listeners.delete(update);
  }, []);
  return location;
}

type LinkProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & { href: string; children?: ComponentChildren };

/** An `<a>` that navigates in place on a plain click and behaves as a normal link otherwise (new tab, copy). */
export function Link({ href, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return createElement('a', { ...rest, href, onClick });
}
