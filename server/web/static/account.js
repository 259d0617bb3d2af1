// The account card: sign up or sign in with a name and password, the signed-in name, sign
// out. The session itself lives in net.js (it is the resume token of a signed-in browser).
import { t } from "./i18n.js";

/** Wire the account form to ``client`` (net.js); ``toast(text)`` tells the person. */
export function setUpAccount(client, toast) {
  const form = document.getElementById("account-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const name = document.getElementById("account-name").value.trim();
    const password = document.getElementById("account-password").value;
    if (!name || !password) return;
    if (ev.submitter?.value === "sign_up") client.signUp(name, password);
    else client.signIn(name, password);
  });
  document.getElementById("sign-out").addEventListener("click", () => client.signOut(false));
  document.getElementById("sign-out-all").addEventListener("click", () => client.signOut(true));
  const change = document.getElementById("password-change");
  document.getElementById("password-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const current = document.getElementById("current-password").value;
    const fresh = document.getElementById("new-password").value;
    if (current && fresh) client.changePassword(current, fresh);
  });
  return {
    /** After every welcome: the form for a guest, the name and sign-out for an account. */
    show(player) {
      const signedIn = client.signedIn;
      form.hidden = signedIn;
      document.getElementById("signed-in").hidden = !signedIn;
      document.getElementById("name-form").hidden = signedIn; // an account keeps its name
      document.getElementById("account-who").textContent = signedIn ? player.name : "";
      change.hidden = !signedIn;
    },
    signedIn(msg) {
      document.getElementById("account-password").value = "";
      toast(t("toast.signed_in", { name: msg.player.name }));
    },
    signedOut() { toast(t("toast.signed_out")); },
    passwordChanged(msg) {
      for (const id of ["current-password", "new-password"]) document.getElementById(id).value = "";
      change.open = false;
      toast(t("toast.password_changed", { n: msg.revoked }));
    },
  };
}
