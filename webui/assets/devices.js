// The "Devices and app passwords" view (/#devices): the signed-in user's
// app passwords, listed, made and revoked through oCIS's auth-app API
// (/auth-app/tokens). An app password lets a program that speaks only
// Basic (rclone, davfs2, a file manager, a script) sign in as the user
// without the user's own sign-in; a new one is shown once, with the lines
// to paste into those programs, and never again.

import * as dav from "./dav.js";
import { chooseFolder, place } from "./picker.js";
import { ask, formatDate, h, icon, showError, showStatus } from "./ui.js";

/** HASH is the overview's address of the view. */
export const HASH = "#devices";

const tokensURL = "/auth-app/tokens";

// The longest label the server keeps (storage.MaxAppPasswordLabel), as
// the name field's length: the server checks it, in bytes.
const maxLabel = 255;

// Expiry choices: a Go duration for the server, or a date to pick.
const expiries = [
  ["", "Never"],
  ["168h", "In 7 days"],
  ["720h", "In 30 days"],
  ["8760h", "In 1 year"],
  ["date", "On a date…"],
];

/**
 * addLink puts the view's link in the page's header, before "Sign out";
 * shown is whether the view is the page's.
 */
export function addLink(shown) {
  let link = document.getElementById("devices-link");
  if (!link) {
    link = h("a", { id: "devices-link", class: "button plain devices-link", href: `/${HASH}` },
      icon("key"),
      h("span", { class: "label-long" }, "Devices and app passwords"),
      h("span", { class: "label-short" }, "App passwords"));
    document.querySelector("header.top").insertBefore(link, document.getElementById("signout"));
  }
  link.toggleAttribute("aria-current", false);
  if (shown) {
    link.setAttribute("aria-current", "page");
  }
}

// ---- The server ----

async function listPasswords() {
  const res = await dav.send("GET", tokensURL, { headers: { Accept: "application/json" }, action: "list your app passwords" });
  return res.json();
}

// createPassword asks for a new password: the answer's token is the
// password itself, this once.
async function createPassword({ label, expiry, space, path, readOnly }) {
  const query = new URLSearchParams({ label });
  if (expiry) {
    query.set("expiry", expiry);
  }
  if (space) {
    query.set("space", space);
  }
  if (space && path) {
    query.set("path", path);
  }
  if (readOnly) {
    query.set("readonly", "true");
  }
  const res = await dav.send("POST", `${tokensURL}?${query}`, { headers: { Accept: "application/json" }, action: "create the app password" });
  return res.json();
}

function revokePassword(id, label) {
  return dav.send("DELETE", `${tokensURL}?${new URLSearchParams({ token: id })}`, { action: `revoke “${label}”` });
}

async function whoAmI() {
  const res = await dav.send("GET", "/graph/v1.0/me", { headers: { Accept: "application/json" }, action: "read who you are" });
  return res.json();
}

// explain is the words for a refused request of this view: the server's
// own for a limit it names (the cap, a label too long), dav.js's otherwise.
function explain(err) {
  if ([400, 409, 507].includes(err.status) && err.serverMessage) {
    return new Error(`Could not create the app password: ${err.serverMessage}.`);
  }
  if (err.status === 507) {
    return new Error("Could not create the app password: you have the most app passwords one person may keep. Revoke one you no longer use first.");
  }
  return err;
}

// ---- Formatting ----

// dateOf is a date of the server's JSON, or null for none (Go's zero time
// is "never").
function dateOf(s) {
  const d = s ? new Date(s) : null;
  return d && !Number.isNaN(d.getTime()) && d.getUTCFullYear() > 1 ? d : null;
}

function spaceTitle(drive) {
  return drive.driveType === "personal" ? "Personal" : drive.name;
}

// spaceID is the space's own id, which a password is narrowed to: a Graph
// drive's id is it after the storage's id and a "$".
function spaceID(drive) {
  return drive.id.slice(drive.id.indexOf("$") + 1);
}

function driveOf(id, drives) {
  return drives.find((d) => spaceID(d) === id || d.id === id);
}

// scopeText says what a password reaches, "Everything" when it is not
// narrowed.
function scopeText(p, drives) {
  const parts = [];
  if (p.space) {
    const drive = driveOf(p.space, drives);
    parts.push(`${drive ? spaceTitle(drive) : p.space}${p.path && p.path !== "/" ? ` › ${p.path}` : ""}`);
  } else {
    parts.push("Everything");
  }
  if (p.read_only) {
    parts.push("read-only");
  }
  return parts.join(", ");
}

function driveURL(drive) {
  return new URL(drive.root.webDavUrl, location.origin).href.replace(/\/+$/, "");
}

// davURL is the WebDAV address a program opens with the password: the
// personal space (what clients open by default), or the space and folder
// it is narrowed to.
function davURL(scope, drives) {
  const drive = scope.space && driveOf(scope.space, drives);
  if (!drive) {
    return `${location.origin}/remote.php/webdav/`;
  }
  const segments = (scope.path || "").split("/").filter(Boolean);
  return `${driveURL(drive)}/${segments.length ? `${dav.encodePath(segments)}/` : ""}`;
}

// shellWord quotes s for a POSIX shell unless it needs none.
function shellWord(s) {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

// secretsWord quotes s for davfs2's secrets file.
function secretsWord(s) {
  return /^[^\s"\\#]+$/.test(s) ? s : `"${s.replace(/["\\]/g, "\\$&")}"`;
}

/** snippets are the lines to paste into each program. */
export function snippets(url, user, password) {
  const kio = url.replace(/^http(s?):/, (_, s) => `webdav${s}:`);
  return {
    rclone: `rclone config create davspaces webdav url=${shellWord(url)} vendor=owncloud user=${shellWord(user)} pass=$(rclone obscure ${shellWord(password)})`,
    davfs2Mount: `sudo mount -t davfs ${shellWord(url)} /mnt/davspaces`,
    davfs2Secrets: `${secretsWord(url)} ${secretsWord(user)} ${secretsWord(password)}`,
    url,
    kio,
  };
}

async function copyText(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    showStatus(`${what} copied.`);
  } catch {
    showError(new Error(`Could not copy ${what.toLowerCase()} (the browser refused): select it and copy it yourself.`));
  }
}

function copyButton(text, what) {
  return h("button", { type: "button", class: "secondary", "aria-label": `Copy ${what.toLowerCase()}`, onclick: () => copyText(text, what) }, icon("copy"), h("span", {}, "Copy"));
}

// ---- The view ----

/** DevicesView is the list, the form and the password shown once. */
class DevicesView {
  constructor(main, setCrumbs) {
    this.main = main;
    this.setCrumbs = setCrumbs;
    this.passwords = [];
    this.drives = [];
    this.me = { id: "" };
    this.panel = null; // the form or the new password, when one is open
  }

  async load() {
    const [passwords, drives, me] = await Promise.all([listPasswords(), dav.drives().catch(() => []), whoAmI()]);
    this.passwords = passwords;
    this.drives = drives.filter((d) => d.driveType !== "virtual");
    this.me = me;
    this.render();
  }

  async reload() {
    this.passwords = await listPasswords();
    this.render();
  }

  render() {
    document.title = "Devices and app passwords · davspaces";
    this.setCrumbs([["Spaces", "/"], ["Devices and app passwords", HASH]]);
    const n = this.passwords.length;
    this.newButton = h("button", { type: "button", class: "primary", id: "new-app-password", onclick: () => this.openForm() }, icon("key"), h("span", {}, "New app password"));
    this.main.replaceChildren(
      h("div", { class: "heading" },
        h("h1", {}, "Devices and app passwords"),
        h("p", { class: "count" }, n === 1 ? "1 app password" : `${n} app passwords`)),
      h("p", { class: "lead" }, "An app password lets a program that cannot sign in here itself (rclone, davfs2, Finder, Windows Explorer, a script) connect as you. Give each program its own: you can revoke it alone, and your own sign-in stays yours."),
      h("div", { class: "tools" }, this.newButton),
      ...[this.panel].filter(Boolean),
      this.list());
    this.newButton.hidden = !!this.panel;
  }

  list() {
    if (this.passwords.length === 0) {
      return h("section", { class: "ap-empty", "aria-labelledby": "ap-empty-title" },
        icon("key"),
        h("h2", { id: "ap-empty-title" }, "No app passwords yet"),
        h("p", {}, "Make one for each program or device that syncs or mounts your files with a user name and password, such as rclone, davfs2 or your computer's file manager."));
    }
    const now = new Date();
    return h("section", { class: "ap-section", "aria-labelledby": "ap-list-title" },
      h("h2", { id: "ap-list-title", class: "visually-hidden" }, "Your app passwords"),
      h("ul", { class: "ap-list" }, this.passwords.map((p) => this.row(p, now))));
  }

  row(p, now) {
    const created = dateOf(p.created_date);
    const used = dateOf(p.last_used_date);
    const expires = dateOf(p.expiration_date);
    const expired = expires && expires <= now;
    const scoped = !!p.space || !!p.read_only;
    return h("li", { class: "ap-item", "data-label": p.label, "data-id": p.token },
      h("div", { class: "ap-head" },
        icon("key"),
        h("span", { class: "ap-name" }, p.label),
        h("button", { type: "button", class: "secondary ap-revoke", "aria-label": `Revoke ${p.label}`, onclick: () => this.revoke(p) }, h("span", {}, "Revoke"))),
      h("dl", { class: "ap-facts" },
        h("div", {}, h("dt", {}, "Access"), h("dd", { class: scoped ? "ap-scope scoped" : "ap-scope" }, scopeText(p, this.drives))),
        h("div", {}, h("dt", {}, "Created"), h("dd", {}, created ? formatDate(created) : "–")),
        h("div", {}, h("dt", {}, "Last used"), h("dd", {}, used ? formatDate(used) : "Never")),
        h("div", {}, h("dt", {}, expired ? "Expired" : "Expires"), h("dd", { class: expired ? "ap-expired" : "" }, expires ? formatDate(expires) : "Never"))));
  }

  // ---- New app password ----

  openForm() {
    this.panel = this.form();
    this.render();
    this.panel.querySelector("#ap-label").focus();
  }

  closePanel() {
    this.panel = null;
    this.render();
    this.newButton.focus();
  }

  form() {
    const label = h("input", { type: "text", id: "ap-label", name: "label", required: true, autocomplete: "off", spellcheck: "false", maxlength: String(maxLabel), placeholder: "For example: rclone on my laptop", "aria-describedby": "ap-label-hint" });
    const expiry = h("select", { id: "ap-expiry", name: "expiry" }, expiries.map(([value, text]) => h("option", { value }, text)));
    const date = h("input", { type: "date", id: "ap-date", name: "date", "aria-label": "Expiry date", min: new Date(Date.now() + 86400000).toISOString().slice(0, 10) });
    date.hidden = true;
    expiry.addEventListener("change", () => {
      date.hidden = expiry.value !== "date";
      date.required = !date.hidden;
      if (!date.hidden) {
        date.focus();
      }
    });
    const space = h("select", { id: "ap-space", name: "space" },
      h("option", { value: "" }, "Everything you can reach"),
      this.drives.map((d) => h("option", { value: spaceID(d) }, spaceTitle(d))));
    const folder = { segments: [] };
    const folderText = h("span", { class: "ap-folder-path", id: "ap-folder", "aria-live": "polite" }, "The whole space");
    const chooseButton = h("button", { type: "button", class: "secondary", id: "ap-choose-folder" }, icon("folder"), h("span", {}, "Choose a folder…"));
    const wholeButton = h("button", { type: "button", class: "plain", id: "ap-whole-space" }, "Use the whole space");
    const folderLine = h("div", { class: "ap-folder" }, h("span", { class: "ap-field-name" }, "Folder"), folderText, chooseButton, wholeButton);
    const setFolder = (segments) => {
      folder.segments = segments;
      folderText.textContent = segments.length ? `/${segments.join("/")}` : "The whole space";
      wholeButton.hidden = segments.length === 0;
    };
    setFolder([]);
    folderLine.hidden = true;
    space.addEventListener("change", () => {
      setFolder([]);
      folderLine.hidden = space.value === "";
    });
    chooseButton.addEventListener("click", async () => {
      const drive = driveOf(space.value, this.drives);
      const base = new URL(drive.root.webDavUrl, location.origin).pathname.replace(/\/+$/, "");
      const at = await chooseFolder(`A folder of ${spaceTitle(drive)}`, place(base, folder.segments, drive.id));
      if (at) {
        setFolder(at.segments);
      }
      chooseButton.focus();
    });
    wholeButton.addEventListener("click", () => {
      setFolder([]);
      chooseButton.focus();
    });
    const readOnly = h("input", { type: "checkbox", id: "ap-readonly", name: "readonly" });
    const problem = h("p", { class: "note error ap-problem", role: "alert", tabindex: "-1" });
    problem.hidden = true;
    const submit = h("button", { type: "submit", class: "primary" }, "Create app password");
    const form = h("form", { class: "ap-panel ap-form", "aria-labelledby": "ap-form-title", novalidate: true },
      h("h2", { id: "ap-form-title" }, "New app password"),
      h("label", { class: "ap-field", for: "ap-label" }, h("span", { class: "ap-field-name" }, "Name"), label),
      h("p", { class: "ap-hint", id: "ap-label-hint" }, "Name the program or device, so that you know later which one to revoke."),
      h("div", { class: "ap-field" },
        h("label", { class: "ap-field-name", for: "ap-expiry" }, "Expires"),
        h("div", { class: "ap-inline" }, expiry, date)),
      h("fieldset", { class: "ap-scope-fields" },
        h("legend", {}, "Access ", h("span", { class: "ap-optional" }, "(optional)")),
        h("div", { class: "ap-field" }, h("label", { class: "ap-field-name", for: "ap-space" }, "Space"), space),
        folderLine,
        h("label", { class: "ap-check" }, readOnly, h("span", {}, "Read-only: it can list and download, but not change anything"))),
      problem,
      h("div", { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: () => this.closePanel() }, "Cancel"),
        submit));
    form.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && !document.querySelector("dialog[open]")) {
        ev.preventDefault();
        this.closePanel();
      }
    });
    const fail = (message, field) => {
      problem.textContent = message;
      problem.hidden = false;
      (field || problem).focus();
    };
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      problem.hidden = true;
      const name = label.value.trim();
      if (name === "") {
        fail("Give the app password a name.", label);
        return;
      }
      let ttl = expiry.value;
      if (ttl === "date") {
        // To the end of the chosen day, in this browser's time zone.
        const end = date.value ? new Date(`${date.value}T23:59:59`) : null;
        if (!end || end <= new Date()) {
          fail("Choose a day after today for the expiry.", date);
          return;
        }
        ttl = `${Math.ceil((end - Date.now()) / 1000)}s`;
      }
      const scope = { space: space.value, path: folder.segments.length ? `/${folder.segments.join("/")}` : "", readOnly: readOnly.checked };
      submit.disabled = true;
      try {
        const made = await createPassword({ label: name, expiry: ttl, ...scope });
        // The list first: rendered again after the password is shown, it
        // would take the focus from it.
        this.passwords = await listPasswords().catch(() => [...this.passwords, made]);
        this.showCreated(made, scope);
      } catch (err) {
        fail(explain(err).message);
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  // showCreated shows a new password once, with the user name to type
  // with it and the lines to paste; "Done" forgets it.
  showCreated(made, scope) {
    const user = this.me.id;
    const lines = snippets(davURL(scope, this.drives), user, made.token);
    // A text area, which wraps the password at a phone's width.
    const password = h("textarea", { id: "ap-password", readonly: true, rows: "1", spellcheck: "false", autocomplete: "off", "aria-describedby": "ap-once" });
    password.value = made.token;
    const block = (id, text, what) => h("div", { class: "ap-code" }, h("pre", {}, h("code", { id }, text)), copyButton(text, what));
    this.panel = h("section", { class: "ap-panel ap-created", "aria-labelledby": "ap-created-title" },
      h("h2", { id: "ap-created-title" }, `App password for “${made.label}”`),
      h("p", { class: "note ap-once", id: "ap-once" }, h("strong", {}, "Copy it now: it is shown only this once."), " If you lose it, revoke it and make a new one."),
      h("div", { class: "ap-secret" },
        h("div", { class: "ap-field" },
          h("span", { class: "ap-field-name" }, "User name"),
          h("div", { class: "ap-inline" }, h("code", { id: "ap-user", class: "ap-value" }, user), copyButton(user, "User name"))),
        h("div", { class: "ap-field" },
          h("label", { class: "ap-field-name", for: "ap-password" }, "App password"),
          h("div", { class: "ap-inline" }, password, copyButton(made.token, "App password")))),
      h("h3", {}, "Ready to paste"),
      h("div", { class: "ap-snippets" },
        h("section", { class: "ap-snippet" },
          h("h4", {}, "rclone"),
          h("p", {}, "Makes the remote ", h("code", {}, "davspaces:"), "; then, for example, ", h("code", {}, "rclone lsf davspaces:"), "."),
          block("ap-rclone", lines.rclone, "The rclone command")),
        h("section", { class: "ap-snippet" },
          h("h4", {}, "davfs2"),
          h("p", {}, "The line for ", h("code", {}, "/etc/davfs2/secrets"), " (or ", h("code", {}, "~/.davfs2/secrets"), "), then the mount:"),
          block("ap-davfs2-secrets", lines.davfs2Secrets, "The secrets line"),
          block("ap-davfs2-mount", lines.davfs2Mount, "The mount command")),
        h("section", { class: "ap-snippet" },
          h("h4", {}, "Finder, Windows Explorer, Dolphin and other file managers"),
          h("p", {}, "Connect to this address (Finder: Go › Connect to Server; Explorer: Map network drive) with the user name and app password above:"),
          block("ap-url", lines.url, "The address"),
          h("p", {}, "In Dolphin and other KDE programs:"),
          block("ap-kio", lines.kio, "The KDE address"))),
      h("div", { class: "dialog-buttons" },
        h("button", { type: "button", class: "primary", id: "ap-done", onclick: () => this.closePanel() }, "Done")));
    this.render();
    password.focus();
    password.select();
  }

  // ---- Revoke ----

  async revoke(p) {
    const ok = await ask({
      title: `Revoke “${p.label}”?`,
      message: "Programs that use it are signed out at once, on every server. This cannot be undone.",
      confirm: "Revoke",
      danger: true,
    });
    if (!ok) {
      return;
    }
    try {
      await revokePassword(p.token, p.label);
      showStatus(`“${p.label}” is revoked.`);
    } catch (err) {
      if (err.status !== 404) {
        showError(err);
        return;
      }
      showStatus(`“${p.label}” was revoked already.`);
    }
    await this.reload().catch(showError);
    (this.main.querySelector(".ap-revoke") || this.newButton).focus();
  }
}

/** show shows the view in main; setCrumbs sets the header's breadcrumbs. */
export async function show({ main, setCrumbs }) {
  main.replaceChildren(h("h1", {}, "Devices and app passwords"), h("p", { class: "loading" }, "Loading…"));
  await new DevicesView(main, setCrumbs).load();
}
