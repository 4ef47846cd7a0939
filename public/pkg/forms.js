// The Datasets pages' forms (app/src/pages/datasets.rs and
// admin/datasets.rs): each <form data-api="METHOD /v1/…" data-shape=…>
// is sent to /v1 as JSON (the session cookie and this page's Origin are
// what /v1 checks); its status line says what was refused and why (the
// API's own message), and on success the page reloads. The pages stay
// server-rendered: nothing of them is in the browser's wasm bundle.
(() => {
  const list = (text) => {
    const labs = text.split(',').map((l) => l.trim()).filter(Boolean);
    return labs.length ? labs : null;
  };
  const part = (name) => encodeURIComponent(name);
  // the request each form's fields make: [path suffix, body]
  const shapes = {
    request: (f) => ['', { name: f.name.trim(), url: f.url.trim(), reason: f.reason, sha256: f.sha256.trim() || null }],
    register: (f) => {
      const source = f.path.trim() ? { path: f.path.trim() } : { url: f.url.trim(), sha256: f.sha256.trim() || null };
      return ['', { name: f.name.trim(), description: f.description, labs: list(f.labs), source }];
    },
    labs: (f) => [part(f.name), { labs: list(f.labs) }],
    delete: (f) => [part(f.name), undefined],
    decide: (f) => (f.decision === 'approve' ? ['approve', {}] : ['reject', { reason: f.reason }]),
  };
  document.addEventListener('submit', async (e) => {
    const form = e.target.closest('form[data-api]');
    if (!form) return;
    e.preventDefault();
    const fields = Object.fromEntries(new FormData(form, e.submitter));
    const [method, base] = form.dataset.api.split(' ');
    const [suffix, body] = shapes[form.dataset.shape](fields);
    const status = form.querySelector('[role=status]');
    const answer = await fetch(base + suffix, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch(() => null);
    if (answer && answer.ok) {
      if (status) status.textContent = form.dataset.done || '';
      location.reload();
      return;
    }
    let why = answer ? `HTTP ${answer.status}` : 'no answer';
    try {
      why = (await answer.json()).error.message;
    } catch (_) {}
    if (status) {
      status.textContent = why;
      status.classList.add('error');
    }
  });
})();
