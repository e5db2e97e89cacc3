// The console's one script, served by the service itself: small enhancements of pages that work
// without it. Times: the server knows no reader's zone, so it writes UTC in <time datetime>; here a
// recent instant reads as relative ("12 minutes ago"), an older one in the reader's own zone, and
// the element's title keeps both the local time and the UTC one. Copy buttons: beside each ID and
// secret marked for it (`code[data-copy]`, `code.secret`), where the browser lets a page write to
// the clipboard (a secure context: https, or localhost). File forms (`form[data-upload]`, a
// dataset's "Load a file"): a file over the limit is refused before it is sent, and the form is
// sent by XMLHttpRequest to show how much of the file has gone (a <progress> and a status line);
// the answer's page is then opened (the load's), or its message shown beside the form.
export const CONSOLE_JS = `'use strict';
(() => {
  const RECENT_MS = 7 * 24 * 3600 * 1000;
  const UNITS = [['year', 31536000], ['month', 2592000], ['week', 604800], ['day', 86400], ['hour', 3600], ['minute', 60]];
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const zoneName = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' });
  const pad = (n) => String(n).padStart(2, '0');
  const local = (d) => {
    const zone = zoneName.formatToParts(d).find((p) => p.type === 'timeZoneName');
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' +
      pad(d.getMinutes()) + ':' + pad(d.getSeconds()) + (zone ? ' ' + zone.value : '');
  };
  const ago = (ms) => {
    const seconds = Math.round(ms / 1000);
    for (const [unit, size] of UNITS) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
    return relative.format(0, 'second');
  };
  const showTimes = () => {
    const now = Date.now();
    for (const el of document.querySelectorAll('time[datetime]')) {
      const at = new Date(el.getAttribute('datetime'));
      if (Number.isNaN(at.getTime())) continue;
      if (el.dataset.utc === undefined) el.dataset.utc = el.textContent;
      const shown = local(at);
      const recent = Math.abs(at.getTime() - now) < RECENT_MS;
      el.textContent = recent ? ago(at.getTime() - now) : shown;
      el.title = recent ? shown + ' (' + el.dataset.utc + ')' : el.dataset.utc;
    }
  };
  const addCopyButtons = () => {
    if (!window.isSecureContext || !navigator.clipboard) return;
    for (const code of document.querySelectorAll('code[data-copy], code.secret')) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'copy';
      button.textContent = 'Copy';
      button.setAttribute('aria-label', 'Copy ' + (code.dataset.copy || 'this'));
      button.setAttribute('aria-live', 'polite');
      button.addEventListener('click', () => {
        navigator.clipboard.writeText(code.textContent.trim()).then(
          () => { button.textContent = 'Copied'; },
          () => { button.textContent = 'Not copied'; },
        );
        setTimeout(() => { button.textContent = 'Copy'; }, 2000);
      });
      code.after(' ', button);
    }
  };
  const enhanceUploads = () => {
    if (!window.FormData || !window.DOMParser) return;
    for (const form of document.querySelectorAll('form[data-upload]')) {
      const input = form.querySelector('input[type=file]');
      const button = form.querySelector('button[type=submit]');
      if (!input || !button) continue;
      const bar = document.createElement('progress');
      bar.max = 100;
      bar.value = 0;
      bar.hidden = true;
      bar.id = 'upload-progress';
      bar.setAttribute('aria-label', 'Sent so far');
      const status = document.createElement('p');
      status.id = 'upload-status';
      status.setAttribute('role', 'status');
      button.after(bar, status);
      const say = (text, isError) => {
        status.textContent = text;
        status.className = isError ? 'error' : '';
      };
      form.addEventListener('submit', (event) => {
        const file = input.files && input.files[0];
        const max = Number(form.dataset.maxBytes);
        event.preventDefault();
        if (!file) { say('Choose a file to load.', true); return; }
        if (max > 0 && file.size > max) {
          say('This file is larger than the limit of ' + form.dataset.maxWords + ', so it was not sent.', true);
          return;
        }
        const xhr = new XMLHttpRequest();
        xhr.open('POST', form.action);
        const sent = (part) => {
          const pct = Math.floor((100 * part.loaded) / (part.total || 1));
          bar.value = pct;
          say('Sending the file: ' + pct + '%', false);
        };
        xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) sent(e); });
        xhr.upload.addEventListener('load', () => say('Sent; starting the load…', false));
        const failed = (text) => {
          bar.hidden = true;
          button.disabled = false;
          say(text, true);
        };
        xhr.addEventListener('load', () => {
          if (xhr.status < 400 && xhr.responseURL) { window.location.assign(xhr.responseURL); return; }
          const page = new DOMParser().parseFromString(xhr.responseText, 'text/html');
          const detail = page.querySelector('main h1 + p');
          failed(detail ? detail.textContent : 'The file was not loaded (error ' + xhr.status + ').');
        });
        xhr.addEventListener('error', () => failed('The file could not be sent: the connection failed. Try again.'));
        bar.value = 0;
        bar.hidden = false;
        button.disabled = true;
        say('Sending the file: 0%', false);
        xhr.send(new FormData(form));
      });
    }
  };
  showTimes();
  setInterval(showTimes, 30000);
  addCopyButtons();
  enhanceUploads();
})();
`;
