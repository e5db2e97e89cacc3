// The console's one stylesheet, served by the service itself (nothing is fetched from elsewhere).
// System fonts; text contrast at least 7:1 on white (WCAG AAA), controls at least 4.5:1; a thick
// visible focus ring; one column that fits a 375 px screen without horizontal scrolling: long
// unbroken text (emails, IDs, links) wraps anywhere, tables keep their words and scroll in their box,
// with a shadow at the side that has more (the backgrounds scrolled with the content cover it at
// either end). Prose keeps a reading width; tables take the screen's, and free text in a cell (an
// address, an audit detail: class wrap) breaks anywhere rather than hiding a column.
// The box is positioned so that absolutely positioned text inside it (screen-reader-only labels)
// is clipped by it too, instead of widening the page.
export const CONSOLE_CSS = `
*,*::before,*::after{box-sizing:border-box}
.table-wrap{position:relative}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1a1a1a;background:#fff;-webkit-text-size-adjust:100%}
body{margin:0;overflow-wrap:anywhere}
a{color:#0b4f9c}
a:hover{color:#07305f}
:focus-visible{outline:3px solid #b35900;outline-offset:2px}
.skip{position:absolute;left:-999px}
.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:1}
header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;padding:.75rem 1rem;border-bottom:1px solid #6b6b6b}
header .brand{font-weight:700;text-decoration:none;color:#1a1a1a}
header form{margin:0}
header nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin-right:auto;margin-left:1.5rem}
header nav a{padding:.25rem 0}
.trail{max-width:76rem;margin:0 auto;padding:.75rem 1rem 0;font-size:.95rem}
.trail ol{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap}
.trail li+li::before{content:"›";padding:0 .5rem;color:#404040}
.trail [aria-current]{color:#404040}
main{max-width:76rem;margin:0 auto;padding:1rem}
main>:not(.table-wrap){max-width:48rem}
h1{font-size:1.5rem;line-height:1.25}
h2{font-size:1.2rem;margin-top:2rem}
label{display:block;font-weight:600;margin-top:1rem}
input,select,textarea{display:block;width:100%;max-width:28rem;font:inherit;padding:.5rem;margin-top:.25rem;border:1px solid #595959;border-radius:4px;color:#1a1a1a;background:#fff}
textarea{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem;max-width:100%;resize:vertical;overflow-wrap:anywhere}
ul.plain{margin:0;padding-left:1rem}
.wrap{overflow-wrap:anywhere}
td{vertical-align:top}
time{white-space:nowrap}
button{font:inherit;margin-top:1rem;padding:.5rem 1rem;border:2px solid #0b4f9c;border-radius:4px;background:#0b4f9c;color:#fff;cursor:pointer}
button:hover{background:#07305f;border-color:#07305f}
button.secondary{background:#fff;color:#0b4f9c;margin-top:0}
button.copy{background:#fff;color:#0b4f9c;margin-top:0;padding:0 .5rem;font-size:.875rem}
.hint{color:#404040;font-size:.95rem;margin:.25rem 0 0}
code.action{display:block;color:#404040;font-size:.85rem;overflow-wrap:normal;white-space:nowrap}
.error{border-left:4px solid #a30000;background:#fdf0f0;color:#5c0000;padding:.5rem .75rem}
.notice{border-left:4px solid #0b6b2f;background:#eefaf1;color:#0a3d1c;padding:.5rem .75rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
code,.secret{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
.secret{display:block;padding:.5rem;background:#f2f2f2;border:1px solid #595959;user-select:all}
button.danger{background:#a30000;border-color:#a30000}
button.danger:hover{background:#6e0000;border-color:#6e0000}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.table-wrap{overflow-x:auto;background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)) left/2rem 100% no-repeat local,linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) right/2rem 100% no-repeat local,radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.3),rgba(0,0,0,0)) left/.75rem 100% no-repeat scroll,radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.3),rgba(0,0,0,0)) right/.75rem 100% no-repeat scroll}
table{border-collapse:collapse;width:100%;overflow-wrap:normal}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #bdbdbd}
fieldset{border:1px solid #595959;border-radius:4px;margin:1rem 0 0;padding:.5rem 1rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.check{display:flex;align-items:center;gap:.5rem;margin-top:.5rem}
.check input{width:auto;margin:0;flex:none}
.check label{margin:0;font-weight:400;overflow-wrap:anywhere}
form.inline{display:inline-block;margin:0 .25rem .25rem 0}
form.inline button{margin-top:0}
.cell{display:block;min-width:6rem;max-width:20rem;overflow-wrap:break-word}
@media (max-width:30rem){dl{grid-template-columns:1fr}dd{margin-bottom:.5rem}}
`;
