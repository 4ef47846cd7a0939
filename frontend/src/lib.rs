//! The browser entry point: hydrates the console's islands (the parts of
//! a page that act in the browser: live queue and job, forms). Everything
//! else is server-rendered HTML, so the wasm bundle carries only those.

// links the app crate, whose islands are exported to the page's script
#[allow(unused_imports)]
use app::*;

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    // readable panics while developing; the release bundle leaves the
    // hook's formatting code out (it cost first-load bytes on every page)
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
