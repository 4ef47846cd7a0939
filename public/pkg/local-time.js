// Refines each server-rendered <time datetime data-local> (UTC) to the
// reader's zone with a relative form; see components.rs `Time`.
(() => {
  const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  const date = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short' });
  const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const when = (at, now) => {
    const days = Math.round((midnight(at) - midnight(now)) / 864e5), t = clock.format(at);
    if (days === 0) return `${t} today`;
    if (days === -1) return `${t} yesterday`;
    if (days === 1) return `${t} tomorrow`;
    return `${date.format(at)}${at.getFullYear() === now.getFullYear() ? '' : ' ' + at.getFullYear()}, ${t}`;
  };
  const relative = (ms) => {
    const min = Math.round(Math.abs(ms) / 6e4);
    if (min < 1) return 'now';
    const h = Math.floor(min / 60), m = min % 60;
    const span = min < 60 ? `${min} min` : min < 2880 ? (m ? `${h} h ${m} min` : `${h} h`) : `${Math.round(min / 1440)} days`;
    return ms > 0 ? `in ${span}` : `${span} ago`;
  };
  // only the text node's data changes: hydration expects the nodes the
  // server sent (text and markers)
  const refine = (el) => {
    const at = new Date(el.getAttribute('datetime'));
    const node = [...el.childNodes].find((n) => n.nodeType === 3);
    if (!node || Number.isNaN(at.getTime())) return;
    const now = new Date(), text = `${when(at, now)} · ${relative(at - now)}`;
    if (node.data !== text) node.data = text;
  };
  const all = (root) => root.querySelectorAll('time[data-local]').forEach(refine);
  new MutationObserver((changes) => {
    for (const c of changes) {
      const el = c.type === 'characterData' ? c.target.parentElement : c.target;
      const time = el && el.closest && el.closest('time[data-local]');
      if (time) refine(time);
      for (const n of c.addedNodes) if (n.nodeType === 1) n.matches('time[data-local]') ? refine(n) : all(n);
    }
  }).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
  all(document);
  setInterval(() => all(document), 30000);
})();
