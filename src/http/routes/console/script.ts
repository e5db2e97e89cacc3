// The console's one script, served by the service itself: small enhancements of pages that work
// without it. Times: the server knows no reader's zone, so it writes UTC in <time datetime>; here a
// recent instant reads as relative ("12 minutes ago"), an older one in the reader's own zone, and
// the element's title keeps both the local time and the UTC one. Copy buttons: beside each ID and
// secret marked for it (`code[data-copy]`, `code.secret`), where the browser lets a page write to
// the clipboard (a secure context: https, or localhost).
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
  showTimes();
  setInterval(showTimes, 30000);
  addCopyButtons();
})();
`;
