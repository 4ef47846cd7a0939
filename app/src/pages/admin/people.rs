//! `/admin/people`: labs and users — create them, change a user's role,
//! lab, limits or uid, reset a password, disable or enable an account.

use super::forms::{outcome, with_data};
use super::AdminNav;
use crate::api::admin::*;
use crate::pages::components::Layout;
use leptos::prelude::*;

#[component]
pub fn AdminPeoplePage() -> impl IntoView {
    view! { <Layout><AdminPeoplePageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminPeoplePageBody() -> impl IntoView {
    let create_lab = ServerAction::<AdminForm>::new();
    let create_user = ServerAction::<AdminForm>::new();
    let update_user = ServerAction::<AdminForm>::new();
    let versions = move || create_lab.version().get() + create_user.version().get() + update_user.version().get();
    view! {
            <h1>"Labs and users"</h1>
            <AdminNav/>
            {with_data(versions, move |admin| {
                let labs_for_new = admin.labs.clone();
                let labs_for_edit = admin.labs.clone();
                let usernames: Vec<String> = admin.users.iter().map(|u| u.username.clone()).collect();
                view! {
                    <section aria-labelledby="users-h">
                        <h2 id="users-h">"Users"</h2>
                        <div class="scroll" tabindex="0">
                        <table class="table" data-testid="users">
                            <thead><tr><th>"User"</th><th>"Lab"</th><th>"Role"</th><th>"Unix uid"</th><th>"Concurrent jobs"</th></tr></thead>
                            <tbody>
                                {admin.users.into_iter().map(|u| view! {
                                    <tr>
                                        <td>{u.username}{u.local.then_some(" (local)")}{u.university.then_some(" (university)")}{u.disabled.then_some(" (disabled)")}</td><td>{u.lab}</td><td>{u.role.as_str()}</td>
                                        <td>{match (u.unix_uid, u.allocated_uid) {
                                            (Some(uid), _) => uid.to_string(),
                                            (None, Some(uid)) => format!("{uid} (allocated)"),
                                            (None, None) => "none: jobs are refused".into(),
                                        }}</td>
                                        <td>{u.max_concurrent}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                        </div>
                        <p class="muted">"Labs: " {admin.labs.join(", ")}</p>
                        <p class="muted" data-testid="university-note">"Users marked (university) sign in through the university: their lab, role, uid and gid come from it (and its directory) at every sign-in, so they cannot be changed here."</p>
                    </section>
                    <section aria-labelledby="people-forms-h">
                        <h2 id="people-forms-h">"Change labs and users"</h2>
                        <ActionForm action=create_lab attr:class="card form" attr:data-testid="add-lab">
                            <input type="hidden" name="form" value="create_lab"/>
                            <h3>"Add a lab"</h3>
                            <label for="lab-name">"Name"</label>
                            <input id="lab-name" name="name" required maxlength="64" placeholder="vision-lab"/>
                            {outcome(create_lab.value())}
                            <button type="submit">"Add lab"</button>
                        </ActionForm>
                        <ActionForm action=create_user attr:class="card form" attr:data-testid="add-user">
                            <input type="hidden" name="form" value="create_user"/>
                            <h3>"Add a user"</h3>
                            <label for="new-username">"Username"</label>
                            <input id="new-username" name="username" required maxlength="64"/>
                            <label for="new-password">"Password (10 characters or more)"</label>
                            <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="10" required/>
                            <label for="new-lab">"Lab"</label>
                            <select id="new-lab" name="lab">
                                {labs_for_new.into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                            </select>
                            <label for="new-role">"Role"</label>
                            <select id="new-role" name="role">
                                <option value="researcher">"researcher"</option>
                                <option value="admin">"admin"</option>
                            </select>
                            <label for="new-uid">"Unix uid (optional; jobs run as it)"</label>
                            <input id="new-uid" name="unix_uid" type="number" min="1000"/>
                            <label for="new-max">"Concurrent jobs (default 2)"</label>
                            <input id="new-max" name="max_concurrent" type="number" min="0" max="64"/>
                            <label class="check"><input type="checkbox" name="local" value="on"/>" Local: may use a password when sign-in goes through the university (break-glass)"</label>
                            {outcome(create_user.value())}
                            <button type="submit">"Add user"</button>
                        </ActionForm>
                        <ActionForm action=update_user attr:class="card form" attr:data-testid="edit-user">
                            <input type="hidden" name="form" value="update_user"/>
                            <h3>"Edit a user (blank = unchanged)"</h3>
                            <label for="edit-username">"User"</label>
                            <select id="edit-username" name="username">
                                {usernames.into_iter().map(|u| view! { <option value=u.clone()>{u.clone()}</option> }).collect_view()}
                            </select>
                            <label for="edit-lab">"Lab"</label>
                            <select id="edit-lab" name="lab">
                                <option value="">"(unchanged)"</option>
                                {labs_for_edit.into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                            </select>
                            <label for="edit-role">"Role"</label>
                            <select id="edit-role" name="role">
                                <option value="">"(unchanged)"</option>
                                <option value="researcher">"researcher"</option>
                                <option value="admin">"admin"</option>
                            </select>
                            <label for="edit-uid">"Unix uid (\"none\" removes it)"</label>
                            <input id="edit-uid" name="unix_uid"/>
                            <label for="edit-max-c">"Concurrent jobs"</label>
                            <input id="edit-max-c" name="max_concurrent" type="number" min="0" max="64"/>
                            <label for="edit-password">"Reset password to"</label>
                            <input id="edit-password" name="password" type="password" autocomplete="new-password"/>
                            <label for="edit-access">"Sign-in"</label>
                            <select id="edit-access" name="access">
                                <option value="">"(unchanged)"</option>
                                <option value="disable">"disable: refuse sign-in, end sessions and tokens now"</option>
                                <option value="enable">"enable"</option>
                            </select>
                            {outcome(update_user.value())}
                            <button type="submit">"Save user"</button>
                        </ActionForm>
                    </section>
                }
            })}
        }
}
