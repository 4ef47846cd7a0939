//! The console's pages, in folders by area: jobs (queue, list, one job,
//! submit), admin (maintenance, cluster, people, backfill), account,
//! usage and `policy` (the Policy page, readable signed out); `home` holds sign-in and the dashboard, `components` what pages
//! share. This file is the HTML shell and the router.

pub mod account;
pub mod admin;
pub mod components;
pub mod datasets;
pub mod files;
mod home;
pub mod jobs;
pub mod notifications;
pub mod policy;
pub mod usage;

use account::AccountPage;
use admin::{AdminBackfillPage, AdminClusterPage, AdminDatasetsPage, AdminPage, AdminPeoplePage};
use components::Layout;
use datasets::DatasetsPage;
use files::FilesPage;
use home::{DashboardPage, LoginPage};
use jobs::{JobPage, JobsPage, QueuePage, SubmitPage};
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet};
use leptos_router::{
    components::{Route, Router, Routes},
    ParamSegment, StaticSegment,
};
use policy::PolicyPage;
use usage::UsagePageView;

/// The document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang=crate::i18n::locale().tag()>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <script src="/pkg/local-time.js" defer></script>
                <HydrationScripts options islands=true/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="jpu" href="/pkg/jpu-share.css"/>
        <Router>
            <Routes fallback=|| view! { <Layout><p>{crate::i18n::t("not-found")}</p></Layout> }>
                <Route path=StaticSegment("") view=DashboardPage/>
                <Route path=StaticSegment("login") view=LoginPage/>
                <Route path=StaticSegment("queue") view=QueuePage/>
                <Route path=StaticSegment("jobs") view=JobsPage/>
                <Route path=(StaticSegment("jobs"), ParamSegment("id")) view=JobPage/>
                <Route path=StaticSegment("submit") view=SubmitPage/>
                <Route path=StaticSegment("usage") view=UsagePageView/>
                <Route path=StaticSegment("policy") view=PolicyPage/>
                <Route path=StaticSegment("account") view=AccountPage/>
                <Route path=StaticSegment("files") view=FilesPage/>
                <Route path=StaticSegment("datasets") view=DatasetsPage/>
                <Route path=StaticSegment("admin") view=AdminPage/>
                <Route path=(StaticSegment("admin"), StaticSegment("cluster")) view=AdminClusterPage/>
                <Route path=(StaticSegment("admin"), StaticSegment("people")) view=AdminPeoplePage/>
                <Route path=(StaticSegment("admin"), StaticSegment("backfill")) view=AdminBackfillPage/>
                <Route path=(StaticSegment("admin"), StaticSegment("datasets")) view=AdminDatasetsPage/>
            </Routes>
        </Router>
    }
}
