// Refines each server-rendered <time datetime data-local> (UTC) to the
// reader's zone with a relative form; see components.rs `Time`.
(() => {
  // the page's language (the server chose it): English or Korean words
  const ko = (document.documentElement.lang || '').startsWith('ko');
  const lang = ko ? 'ko' : undefined;
  const clock = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit' });
  const date = new Intl.DateTimeFormat(lang, { weekday: 'short', day: 'numeric', month: 'short' });
  const dayWord = new Intl.RelativeTimeFormat(ko ? 'ko' : 'en', { numeric: 'auto' });
  const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const when = (at, now) => {
    const days = Math.round((midnight(at) - midnight(now)) / 864e5), t = clock.format(at);
    if (Math.abs(days) <= 1) return ko ? `${dayWord.format(days, 'day')} ${t}` : `${t} ${dayWord.format(days, 'day')}`;
    return `${date.format(at)}${at.getFullYear() === now.getFullYear() ? '' : ' ' + at.getFullYear()}, ${t}`;
  };
  const words = ko
    ? { now: '지금', min: (n) => `${n}분`, h: (n) => `${n}시간`, hm: (h, m) => `${h}시간 ${m}분`, days: (n) => `${n}일`, ago: (s) => `${s} 전`, in: (s) => `${s} 후` }
    : { now: 'now', min: (n) => `${n} min`, h: (n) => `${n} h`, hm: (h, m) => `${h} h ${m} min`, days: (n) => `${n} days`, ago: (s) => `${s} ago`, in: (s) => `in ${s}` };
  const relative = (ms) => {
    const min = Math.round(Math.abs(ms) / 6e4);
    if (min < 1) return words.now;
    const h = Math.floor(min / 60), m = min % 60;
    const span = min < 60 ? words.min(min) : min < 2880 ? (m ? words.hm(h, m) : words.h(h)) : words.days(Math.round(min / 1440));
    return ms > 0 ? words.in(span) : words.ago(span);
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
