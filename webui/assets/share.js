// The share dialog of a file or folder: its public links (create with a
// type, password, expiry and name; copy; change; delete) and its
// invitations of users and groups (search, invite with a role, change the
// role, remove), through Graph's libre-graph permissions of the item:
// /graph/v1beta1/drives/{drive}/items/{item}/permissions, createLink,
// invite, setPassword. Only members who may share see it (mayShare); the
// server refuses everybody else anyway.

import * as dav from "./dav.js";
import { formatDate, h, icon, showError, showPanel, showStatus } from "./ui.js";

const GRAPH = "/graph/v1beta1";

/** The link types a person picks from, in libre-graph's words; some are for folders only. */
const linkTypes = [
  { type: "view", label: "Can view", folderOnly: false },
  { type: "upload", label: "Can upload", folderOnly: true },
  { type: "edit", label: "Can edit", folderOnly: false },
  { type: "createOnly", label: "File drop (upload only, no listing)", folderOnly: true },
];

/** SEARCH_DELAY_MS waits for a pause in typing before searching for people. */
const SEARCH_DELAY_MS = 250;

/**
 * mayShare tells from oc:permissions whether the user may share an item:
 * R says so. Editors may share too (storage.MayShare), whom the server
 * tells by D without S (a member who may delete, not someone who reached
 * the item through a share, who never reshares), where it keeps R for
 * managers.
 */
export function mayShare(permissions) {
  return permissions.includes("R") || (permissions.includes("D") && !permissions.includes("S"));
}

// graph sends one Graph request with a JSON body and answers its JSON
// (null for none).
async function graph(method, url, body, action) {
  const res = await dav.send(method, url, {
    headers: { Accept: "application/json", ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    action,
  });
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

// driveOf is the drive id of a resource id: <storage>$<space>!<node>.
function driveOf(itemId) {
  const bang = itemId.indexOf("!");
  return bang > 0 ? itemId.slice(0, bang) : itemId;
}

// endOfDay is the expiry of a date picked (yyyy-mm-dd): the end of that
// day where the person is, as an ISO time.
function endOfDay(date) {
  const [y, m, d] = date.split("-").map(Number);
  return new Date(y, m - 1, d, 23, 59, 59).toISOString();
}

// dateValue is an expiry as a date input's value.
function dateValue(iso) {
  if (!iso) {
    return "";
  }
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function tomorrow() {
  return dateValue(new Date(Date.now() + 86_400_000).toISOString());
}

/**
 * showShare opens the share dialog of entry ({href, name, folder, fileId}):
 * the focus returns to what opened it when it closes.
 */
export async function showShare(entry) {
  const body = h("div", { class: "share-body" }, h("p", { class: "loading" }, "Loading…"));
  showPanel({ className: "details share", label: `Share ${entry.name}`, title: `Share “${entry.name}”`, closeLabel: "Close the share dialog", body });
  await new SharePanel(entry, body).load();
}

/** SharePanel is the dialog's content: the links and the invitations. */
class SharePanel {
  constructor(entry, body) {
    this.entry = entry;
    this.body = body;
  }

  async load() {
    try {
      // A row of a listing comes without its id (a big folder's listing
      // stays small): the item is read alone once.
      this.entry.fileId ||= (await dav.stat(this.entry.href)).fileId;
      this.itemURL = `${GRAPH}/drives/${encodeURIComponent(driveOf(this.entry.fileId))}/items/${encodeURIComponent(this.entry.fileId)}`;
      const answer = await graph("GET", `${this.itemURL}/permissions`, undefined, "list its shares");
      this.permissions = answer.value || [];
      this.roles = (answer["@libre.graph.permissions.roles.allowedValues"] || []).slice().sort((a, b) => (a["@libre.graph.weight"] || 0) - (b["@libre.graph.weight"] || 0));
      if (this.roles.length === 0) {
        this.roles = await this.roleDefinitions();
      }
    } catch (err) {
      this.body.replaceChildren(h("p", { class: "note error" }, err.message));
      this.body.dataset.ready = "error";
      return;
    }
    this.render();
  }

  // roleDefinitions are the roles for the item's kind, when the listing
  // names none: those whose permissions apply to a file or a folder.
  async roleDefinitions() {
    const condition = this.entry.folder ? "exists @Resource.Folder" : "exists @Resource.File";
    const all = await graph("GET", `${GRAPH}/roleManagement/permissions/roleDefinitions`, undefined, "read the roles");
    return (all || []).filter((r) => (r.rolePermissions || []).some((p) => p.condition === condition));
  }

  get links() {
    return this.permissions.filter((p) => p.link);
  }

  get invitations() {
    return this.permissions.filter((p) => !p.link);
  }

  // act runs a change, reads the permissions again and says what happened;
  // a refusal is shown in words and changes nothing on screen.
  async act(work, done) {
    try {
      await work();
      await this.load();
      if (done) {
        showStatus(done);
      }
    } catch (err) {
      showError(err);
    }
  }

  render() {
    // The focus stays on the control of the same label after a change.
    const focused = this.body.contains(document.activeElement) && document.activeElement.getAttribute("aria-label");
    this.body.replaceChildren(this.linksSection(), this.peopleSection());
    this.body.dataset.ready = "ready";
    const again = focused && this.body.querySelector(`[aria-label="${CSS.escape(focused)}"]`);
    if (again) {
      again.focus();
    }
  }

  // ---- Links ----

  typesFor() {
    return linkTypes.filter((t) => this.entry.folder || !t.folderOnly);
  }

  typeSelect(value, label, onchange) {
    return h("select", { "aria-label": label, onchange },
      this.typesFor().map((t) => h("option", { value: t.type, selected: t.type === value }, t.label)));
  }

  linksSection() {
    const links = this.links;
    return h("section", { class: "share-links" },
      h("h3", {}, "Public links"),
      links.length
        ? h("ul", { class: "share-list" }, links.map((p, i) => this.linkRow(p, i)))
        : h("p", { class: "muted" }, "No links yet: anybody with a link can open the item without an account."),
      this.newLinkForm());
  }

  linkName(p, i) {
    return p.link["@libre.graph.displayName"] || `Link ${i + 1}`;
  }

  linkRow(p, i) {
    const name = this.linkName(p, i);
    const facts = [p.hasPassword ? "password" : "no password", p.expirationDateTime ? `expires ${formatDate(new Date(p.expirationDateTime))}` : "no expiry"];
    if (!p.link.webUrl) {
      // Another member's link: the server gives its address, and changes
      // it, to its creator and the space's managers only.
      const by = p.invitation?.invitedBy?.user?.displayName;
      return h("li", { class: "share-item", "data-link": p.id, "data-url": "" },
        h("div", { class: "share-line" },
          icon("link"),
          h("span", { class: "share-name" }, name),
          h("span", { class: "share-facts" }, [...facts, by ? `made by ${by}` : "made by another member"].join(" · "))));
    }
    const expiry = h("input", { type: "date", value: dateValue(p.expirationDateTime), min: tomorrow(), "aria-label": `Expiry of ${name}`, onchange: (ev) => this.setExpiry(p, name, ev.target.value) });
    return h("li", { class: "share-item", "data-link": p.id, "data-url": p.link.webUrl || "" },
      h("div", { class: "share-line" },
        icon("link"),
        h("span", { class: "share-name" }, name),
        h("span", { class: "share-facts" }, facts.join(" · "))),
      h("div", { class: "share-line" },
        h("input", { type: "text", readonly: true, value: p.link.webUrl || "", "aria-label": `Address of ${name}`, class: "share-url" }),
        h("button", { type: "button", class: "secondary", "aria-label": `Copy ${name}`, onclick: () => this.copy(p, name) }, icon("link"), h("span", {}, "Copy"))),
      h("div", { class: "share-line share-controls" },
        this.typeSelect(p.link.type, `Type of ${name}`, (ev) => this.act(() => graph("PATCH", `${this.itemURL}/permissions/${encodeURIComponent(p.id)}`, { link: { type: ev.target.value } }, `change ${name}`), `${name} changed.`)),
        h("label", { class: "share-expiry" }, h("span", {}, "Expires"), expiry),
        h("button", { type: "button", class: "plain", "aria-label": `${p.hasPassword ? "Change the password of" : "Set a password for"} ${name}`, onclick: () => this.changePassword(p, name) }, p.hasPassword ? "Change password" : "Set password"),
        p.hasPassword && h("button", { type: "button", class: "plain", "aria-label": `Remove the password of ${name}`, onclick: () => this.setPassword(p, name, "") }, "Remove password"),
        h("button", { type: "button", class: "icon-only plain", title: `Delete ${name}`, "aria-label": `Delete ${name}`, onclick: () => this.act(() => graph("DELETE", `${this.itemURL}/permissions/${encodeURIComponent(p.id)}`, undefined, `delete ${name}`), `${name} deleted: its address opens nothing any more.`) }, icon("trash"))));
  }

  async copy(p, name) {
    try {
      await navigator.clipboard.writeText(p.link.webUrl);
      showStatus(`${name} copied: ${p.link.webUrl}`);
    } catch {
      showError(new Error(`Could not copy the link (the browser refused). Its address is ${p.link.webUrl}`));
    }
  }

  setExpiry(p, name, date) {
    const expirationDateTime = date ? endOfDay(date) : null;
    return this.act(() => graph("PATCH", `${this.itemURL}/permissions/${encodeURIComponent(p.id)}`, { expirationDateTime }, `change the expiry of ${name}`),
      date ? `${name} expires at the end of ${formatDate(new Date(expirationDateTime))}.` : `${name} no longer expires.`);
  }

  changePassword(p, name) {
    const input = h("input", { type: "password", minlength: "8", autocomplete: "new-password", "aria-label": `New password of ${name}` });
    const form = h("form", { class: "share-line share-password" },
      input,
      h("button", { type: "submit", class: "primary" }, "Save"),
      h("button", { type: "button", class: "plain", onclick: () => this.render() }, "Cancel"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (input.value.length >= 8) {
        this.setPassword(p, name, input.value);
      } else {
        input.focus();
      }
    });
    this.body.querySelector(`[data-link="${CSS.escape(p.id)}"]`).append(form);
    input.focus();
  }

  setPassword(p, name, password) {
    return this.act(() => graph("POST", `${this.itemURL}/permissions/${encodeURIComponent(p.id)}/setPassword`, { password }, `set the password of ${name}`),
      password ? `${name} has a new password.` : `${name} opens without a password now.`);
  }

  newLinkForm() {
    const type = this.typeSelect("view", "Type of the new link", () => {});
    const name = h("input", { type: "text", maxlength: "255", autocomplete: "off", "aria-label": "Name of the new link", placeholder: "Name (optional)" });
    const password = h("input", { type: "password", minlength: "8", autocomplete: "new-password", "aria-label": "Password of the new link", placeholder: "Password (optional, 8+ characters)" });
    const expiry = h("input", { type: "date", min: tomorrow(), "aria-label": "Expiry of the new link" });
    const form = h("form", { class: "share-new" },
      h("h4", {}, "New link"),
      h("div", { class: "share-fields" }, type, name, password, h("label", { class: "share-expiry" }, h("span", {}, "Expires"), expiry)),
      h("div", { class: "dialog-buttons" }, h("button", { type: "submit", class: "primary" }, icon("link"), h("span", {}, "Create link"))));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (password.value !== "" && password.value.length < 8) {
        password.focus();
        showError(new Error("A link's password has at least 8 characters."));
        return;
      }
      const request = { type: type.value };
      if (name.value.trim()) {
        request.displayName = name.value.trim();
      }
      if (password.value) {
        request.password = password.value;
      }
      if (expiry.value) {
        request.expirationDateTime = endOfDay(expiry.value);
      }
      this.act(() => graph("POST", `${this.itemURL}/createLink`, request, "create the link"), "Link created: copy it and send it.");
    });
    return form;
  }

  // ---- People and groups ----

  roleSelect(value, label, onchange) {
    return h("select", { "aria-label": label, onchange },
      this.roles.map((r) => h("option", { value: r.id, selected: r.id === value }, r.displayName)));
  }

  peopleSection() {
    const invitations = this.invitations;
    return h("section", { class: "share-people" },
      h("h3", {}, "People and groups"),
      invitations.length
        ? h("ul", { class: "share-list" }, invitations.map((p) => this.invitationRow(p)))
        : h("p", { class: "muted" }, "Nobody else has it yet."),
      this.inviteForm());
  }

  invitationRow(p) {
    const who = p.grantedToV2 || {};
    const group = !!who.group;
    const name = (who.group || who.user || {}).displayName || (who.group || who.user || {}).id || "someone";
    const role = (p.roles || [])[0] || "";
    return h("li", { class: "share-item", "data-permission": p.id },
      h("div", { class: "share-line share-controls" },
        icon(group ? "space" : "person"),
        h("span", { class: "share-name" }, name, group ? h("span", { class: "share-facts" }, " (group)") : null),
        this.roleSelect(role, `Role of ${name}`, (ev) => this.act(() => graph("PATCH", `${this.itemURL}/permissions/${encodeURIComponent(p.id)}`, { roles: [ev.target.value] }, `change the role of ${name}`), `${name}'s role changed.`)),
        h("button", { type: "button", class: "icon-only plain", title: `Remove ${name}`, "aria-label": `Remove ${name}`, onclick: () => this.act(() => graph("DELETE", `${this.itemURL}/permissions/${encodeURIComponent(p.id)}`, undefined, `remove ${name}`), `${name} no longer has “${this.entry.name}”.`) }, icon("purge"))));
  }

  inviteForm() {
    let chosen = null;
    let timer = 0;
    let asked = 0; // the newest search; older answers are dropped
    const results = h("ul", { class: "share-results", role: "listbox", "aria-label": "People and groups found" });
    const search = h("input", { type: "search", autocomplete: "off", "aria-label": "Find people and groups", placeholder: "Find people and groups" });
    const role = this.roleSelect((this.roles[0] || {}).id, "Role of the invitation", () => {});
    const invite = h("button", { type: "submit", class: "primary", disabled: true }, "Invite");
    const choose = (who) => {
      chosen = who;
      search.value = who.displayName;
      results.replaceChildren();
      invite.disabled = false;
      invite.focus();
    };
    search.addEventListener("input", () => {
      chosen = null;
      invite.disabled = true;
      clearTimeout(timer);
      const query = search.value.trim();
      if (query.length < 3) {
        results.replaceChildren();
        return;
      }
      timer = setTimeout(async () => {
        const mine = ++asked;
        const found = await this.find(query).catch((err) => err);
        if (mine !== asked) {
          return;
        }
        if (found instanceof Error) {
          results.replaceChildren(h("li", { class: "note error" }, found.message));
          return;
        }
        results.replaceChildren(...(found.length
          ? found.map((who) => h("li", {}, h("button", { type: "button", class: "plain share-result", role: "option", onclick: () => choose(who) }, icon(who.type === "group" ? "space" : "person"), h("span", {}, who.displayName), who.detail && h("span", { class: "share-facts" }, who.detail))))
          : [h("li", { class: "muted" }, "Nobody found. People appear here once they have signed in.")]));
      }, SEARCH_DELAY_MS);
    });
    const form = h("form", { class: "share-new" },
      h("div", { class: "share-fields" }, search, role),
      results,
      h("div", { class: "dialog-buttons" }, invite));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (!chosen) {
        search.focus();
        return;
      }
      const who = chosen;
      const request = { recipients: [{ objectId: who.id, "@libre.graph.recipient.type": who.type }], roles: [role.value] };
      this.act(() => graph("POST", `${this.itemURL}/invite`, request, `invite ${who.displayName}`), `${who.displayName} has “${this.entry.name}” now.`);
    });
    return form;
  }

  // find searches users and groups; each found is {id, displayName, type, detail}.
  async find(query) {
    const q = encodeURIComponent(`"${query}"`);
    const [users, groups] = await Promise.all([
      graph("GET", `/graph/v1.0/users?$search=${q}`, undefined, "find people"),
      graph("GET", `/graph/v1.0/groups?$search=${q}`, undefined, "find groups"),
    ]);
    return [
      ...(users.value || []).map((u) => ({ id: u.id, displayName: u.displayName || u.onPremisesSamAccountName || u.id, type: "user", detail: u.mail || "" })),
      ...(groups.value || []).map((g) => ({ id: g.id, displayName: g.displayName || g.id, type: "group", detail: "group" })),
    ];
  }
}
