//! `/admin/people`: labs and users — create them, change a user's role,
//! lab, limits or uid, reset a password, disable or enable an account.

use super::forms::{outcome, with_data};
use super::AdminNav;
use crate::api::admin::*;
use crate::i18n::{t, Words};
use crate::pages::components::Layout;
use leptos::prelude::*;

#[component]
pub fn AdminPeoplePage() -> impl IntoView {
    view! { <Layout><h1>{t("admin-labs-and-users")}</h1><AdminNav/><AdminPeoplePageBody w=super::admin_words()/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminPeoplePageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let create_lab = ServerAction::<AdminForm>::new();
    let create_user = ServerAction::<AdminForm>::new();
    let update_user = ServerAction::<AdminForm>::new();
    let versions = move || create_lab.version().get() + create_user.version().get() + update_user.version().get();
    view! {
        {with_data(w, versions, move |admin| {
            let labs_for_new = admin.labs.clone();
            let labs_for_edit = admin.labs.clone();
            let usernames: Vec<String> = admin.users.iter().map(|u| u.username.clone()).collect();
            view! {
                <section aria-labelledby="users-h">
                    <h2 id="users-h">{get("admin-users")}</h2>
                    <div class="scroll" tabindex="0">
                    <table class="table" data-testid="users">
                        <thead><tr><th>{get("admin-user")}</th><th>{get("admin-lab")}</th><th>{get("admin-role")}</th><th>{get("admin-unix-uid")}</th><th>{get("admin-concurrent-jobs")}</th></tr></thead>
                        <tbody>
                            {admin.users.into_iter().map(|u| view! {
                                <tr>
                                    <td>{u.username}{u.local.then(|| get("admin-local"))}{u.university.then(|| get("admin-university"))}{u.disabled.then(|| get("admin-disabled"))}</td><td>{u.lab}</td><td>{u.role.as_str()}</td>
                                    <td>{match (u.unix_uid, u.allocated_uid) {
                                        (Some(uid), _) => uid.to_string(),
                                        (None, Some(uid)) => get("admin-allocated").replace("{$uid}", &uid.to_string()),
                                        (None, None) => get("admin-no-uid"),
                                    }}</td>
                                    <td>{u.max_concurrent}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                    <p class="muted">{get("admin-labs")} {admin.labs.join(", ")}</p>
                    <p class="muted" data-testid="university-note">{get("admin-users-marked-university-sign-in-through")}</p>
                </section>
                <section aria-labelledby="people-forms-h">
                    <h2 id="people-forms-h">{get("admin-change-labs-and-users")}</h2>
                    <ActionForm action=create_lab attr:class="card form" attr:data-testid="add-lab">
                        <input type="hidden" name="form" value="create_lab"/>
                        <h3>{get("admin-add-a-lab")}</h3>
                        <label for="lab-name">{get("admin-name")}</label>
                        <input id="lab-name" name="name" required maxlength="64" placeholder="vision-lab"/>
                        {outcome(create_lab.value())}
                        <button type="submit">{get("admin-add-lab")}</button>
                    </ActionForm>
                    <ActionForm action=create_user attr:class="card form" attr:data-testid="add-user">
                        <input type="hidden" name="form" value="create_user"/>
                        <h3>{get("admin-add-a-user")}</h3>
                        <label for="new-username">{get("admin-username")}</label>
                        <input id="new-username" name="username" required maxlength="64"/>
                        <label for="new-password">{get("admin-password-10-characters-or-more")}</label>
                        <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="10" required/>
                        <label for="new-lab">{get("admin-lab")}</label>
                        <select id="new-lab" name="lab">
                            {labs_for_new.into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                        </select>
                        <label for="new-role">{get("admin-role")}</label>
                        <select id="new-role" name="role">
                            <option value="researcher">{get("admin-role-researcher")}</option>
                            <option value="admin">{get("admin-role-admin")}</option>
                        </select>
                        <label for="new-uid">{get("admin-unix-uid-optional-jobs-run-as-it")}</label>
                        <input id="new-uid" name="unix_uid" type="number" min="1000"/>
                        <label for="new-max">{get("admin-concurrent-jobs-default-2")}</label>
                        <input id="new-max" name="max_concurrent" type="number" min="0" max="64"/>
                        <label class="check"><input type="checkbox" name="local" value="on"/>{get("admin-local-may-use-a-password-when-sign-in-go")}</label>
                        {outcome(create_user.value())}
                        <button type="submit">{get("admin-add-user")}</button>
                    </ActionForm>
                    <ActionForm action=update_user attr:class="card form" attr:data-testid="edit-user">
                        <input type="hidden" name="form" value="update_user"/>
                        <h3>{get("admin-edit-a-user-blank-unchanged")}</h3>
                        <label for="edit-username">{get("admin-user")}</label>
                        <select id="edit-username" name="username">
                            {usernames.into_iter().map(|u| view! { <option value=u.clone()>{u.clone()}</option> }).collect_view()}
                        </select>
                        <label for="edit-lab">{get("admin-lab")}</label>
                        <select id="edit-lab" name="lab">
                            <option value="">{get("admin-unchanged")}</option>
                            {labs_for_edit.into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                        </select>
                        <label for="edit-role">{get("admin-role")}</label>
                        <select id="edit-role" name="role">
                            <option value="">{get("admin-unchanged")}</option>
                            <option value="researcher">{get("admin-role-researcher")}</option>
                            <option value="admin">{get("admin-role-admin")}</option>
                        </select>
                        <label for="edit-uid">{get("admin-uid-none")}</label>
                        <input id="edit-uid" name="unix_uid"/>
                        <label for="edit-max-c">{get("admin-concurrent-jobs")}</label>
                        <input id="edit-max-c" name="max_concurrent" type="number" min="0" max="64"/>
                        <label for="edit-password">{get("admin-reset-password-to")}</label>
                        <input id="edit-password" name="password" type="password" autocomplete="new-password"/>
                        <label for="edit-access">{get("admin-sign-in")}</label>
                        <select id="edit-access" name="access">
                            <option value="">{get("admin-unchanged")}</option>
                            <option value="disable">{get("admin-disable-refuse-sign-in-end-sessions-and")}</option>
                            <option value="enable">{get("admin-enable")}</option>
                        </select>
                        {outcome(update_user.value())}
                        <button type="submit">{get("admin-save-user")}</button>
                    </ActionForm>
                </section>
            }
        })}
    }
}
