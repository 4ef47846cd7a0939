// The Files page's actions (app/src/pages/files.rs): uploads (the button
// or files dropped on the zone) go to /v1/files one after another with a
// progress bar; a new folder and a delete (after a confirmation) too.
// The page reloads its folder after each. The session cookie and this
// page's Origin are what /v1 checks; every word shown comes from the
// server-rendered page.
(() => {
  const zone = document.querySelector('[data-upload]');
  const status = zone && zone.querySelector('.upload-status');
  const bar = zone && zone.querySelector('progress');
  const say = (text, failed) => {
    if (!status) return;
    status.textContent = text;
    status.classList.toggle('error', !!failed);
  };
  const reason = (xhr) => {
    try {
      return JSON.parse(xhr.responseText).error.message;
    } catch (_) {
      return `HTTP ${xhr.status}`;
    }
  };
  const send = (method, url, body, onProgress) =>
    new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, url);
      if (onProgress) xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
      xhr.onload = () => resolve(xhr);
      xhr.onerror = () => resolve(xhr);
      xhr.send(body);
    });
  const part = (name) => encodeURIComponent(name);
  const within = (base, name) => (base.endsWith('/') ? base : base + '/') + part(name);

  const upload = async (files) => {
    if (!zone || !files.length) return;
    const base = zone.dataset.upload;
    bar.hidden = false;
    for (const file of files) {
      bar.value = 0;
      say(file.name);
      const xhr = await send('PUT', within(base, file.name), file, (f) => (bar.value = Math.round(f * 100)));
      if (xhr.status !== 201) {
        bar.hidden = true;
        say(`${zone.dataset.failed} ${file.name}: ${reason(xhr)}`, true);
        return;
      }
    }
    bar.value = 100;
    say(zone.dataset.done);
    location.reload();
  };

  if (zone) {
    zone.querySelector('input[type=file]').addEventListener('change', (e) => upload([...e.target.files]));
    zone.addEventListener('dragover', (e) => {
      e.preventDefault();
      zone.classList.add('dragging');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      zone.classList.remove('dragging');
      upload([...e.dataTransfer.files]);
    });
  }

  document.addEventListener('submit', async (e) => {
    const form = e.target.closest('[data-mkdir]');
    if (!form) return;
    e.preventDefault();
    const name = form.querySelector('input[name=name]').value.trim();
    if (!name) return;
    const xhr = await send('POST', within(form.dataset.mkdir, name) + '?mkdir', null);
    if (xhr.status === 201) location.reload();
    else say(`${zone ? zone.dataset.failed : ''} ${name}: ${reason(xhr)}`, true);
  });

  document.addEventListener('click', async (e) => {
    const button = e.target.closest('[data-delete]');
    if (!button) return;
    if (!window.confirm(button.dataset.confirm)) return;
    const xhr = await send('DELETE', button.dataset.delete, null);
    if (xhr.status === 204) location.reload();
    else say(reason(xhr), true);
  });
})();
