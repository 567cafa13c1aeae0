// A few elements as a parsed XML document has them, enough for what
// davwire.js reads (children, names, namespaces, text), since node has no
// DOMParser.

export const DAV = "DAV:";
export const OC = "http://owncloud.org/ns";
export const SABRE = "http://sabredav.org/ns";

/** el is an element in namespace ns; string children are its text. */
export function el(ns, localName, ...children) {
  const elements = children.filter((c) => typeof c !== "string");
  elements.forEach((c, i) => {
    c.nextElementSibling = elements[i + 1] || null;
  });
  return {
    namespaceURI: ns,
    localName,
    firstElementChild: elements[0] || null,
    nextElementSibling: null,
    get textContent() {
      return children.map((c) => (typeof c === "string" ? c : c.textContent)).join("");
    },
    getElementsByTagNameNS(namespace, name) {
      const found = [];
      for (const c of elements) {
        if (c.namespaceURI === namespace && c.localName === name) {
          found.push(c);
        }
        found.push(...c.getElementsByTagNameNS(namespace, name));
      }
      return found;
    },
  };
}

/** doc is a parsed document whose root element is root. */
export function doc(root) {
  return { documentElement: root, getElementsByTagNameNS: (ns, name) => el("", "#document", root).getElementsByTagNameNS(ns, name) };
}

/** d is a DAV: element, oc an ownCloud one. */
export const d = (name, ...children) => el(DAV, name, ...children);
export const oc = (name, ...children) => el(OC, name, ...children);

/** response is a d:response of href with its propstats. */
export function response(href, ...propstats) {
  return d("response", d("href", href), ...propstats);
}

/** propstat is a d:propstat of props with an HTTP status line. */
export function propstat(status, ...props) {
  return d("propstat", d("prop", ...props), d("status", `HTTP/1.1 ${status}`));
}
