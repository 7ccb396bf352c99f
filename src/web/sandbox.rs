//! `createMcpSandboxHandler({ resolveResource, themes, defaultThemeName })` → a GET handler that
//! serves a registered `ui://` resource as a themed HTML document under its own CSP.
//!
//! The steps, top to bottom: method; the `?uri=` check (400 before the resolver runs); the
//! host's `resolveResource(uri, { request, signal })` with the request's own signal; the
//! resource's shape (404 when absent); theme selection; the page and its CSP. Every decision is
//! `core::sandbox`'s; every failure is one versioned diagnostic, built in [`failure_response`].

use std::rc::Rc;

use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use web_sys::{Request, Response, Url};

use crate::core::limits::SANDBOX_THEME_NAME_CHARS_MAX;
use crate::core::sandbox::{
    check_ui_uri, decode_resource, decode_themes, render_page, select_theme, SandboxFailure, Theme,
};
use crate::web::convert::to_json;
use crate::web::http::{bare_response, handler_function, json_response_with, respond};
use crate::web::js::{call, coded_error, set};
use crate::web::options::OptionReader;

struct SandboxOptions {
    resolve_resource: Function,
    themes: Vec<Theme>,
    default_theme_name: String,
    on_error: Option<Function>,
}

const INVALID_CONFIG: &str = crate::core::diagnostics::sandbox::INVALID_CONFIG.code;

fn invalid(detail: &str) -> JsValue {
    coded_error(
        INVALID_CONFIG,
        &format!("The sandbox handler configuration is invalid. {detail}"),
    )
}

impl SandboxOptions {
    fn from_js(options: &JsValue) -> Result<Self, JsValue> {
        if !options.is_object() {
            return Err(invalid("options must be an object"));
        }
        let read = OptionReader {
            options,
            invalid: &invalid,
        };
        let themes_value = read.value("themes");
        let themes = if themes_value.is_undefined() {
            Vec::new()
        } else {
            let json = to_json(&themes_value).map_err(|e| invalid(&format!("themes: {e}")))?;
            decode_themes(&json).map_err(|e| invalid(&e.message()))?
        };
        let name = read.value("defaultThemeName");
        let default_theme_name = if name.is_undefined() {
            "default".to_owned()
        } else {
            name.as_string()
                .filter(|n| !n.is_empty() && n.chars().count() <= SANDBOX_THEME_NAME_CHARS_MAX)
                .ok_or_else(|| {
                    invalid("defaultThemeName must be a string of 1 to 128 characters")
                })?
        };
        Ok(Self {
            resolve_resource: read.required_fn("resolveResource")?,
            themes,
            default_theme_name,
            on_error: read.optional_fn("onError")?,
        })
    }
}

/// Creates the handler. Throws an Error with `code: "SANDBOX_INVALID_CONFIG"` for bad options.
#[wasm_bindgen(js_name = createMcpSandboxHandler)]
pub fn create_mcp_sandbox_handler(options: JsValue) -> Result<Function, JsValue> {
    Ok(handler_function(
        Rc::new(SandboxOptions::from_js(&options)?),
        respond_to,
    ))
}

/// Why a request failed, and for the operator, the cause (never sent).
struct Failure {
    failure: SandboxFailure,
    cause: Option<String>,
}

impl From<SandboxFailure> for Failure {
    fn from(failure: SandboxFailure) -> Self {
        Self {
            failure,
            cause: None,
        }
    }
}

async fn respond_to(options: Rc<SandboxOptions>, request: JsValue) -> Response {
    let options = &*options;
    let Ok(request) = crate::web::http::as_request(request) else {
        return failure_response(options, SandboxFailure::Internal.into());
    };
    match handle(options, &request).await {
        Ok(response) => response,
        Err(failure) => failure_response(options, failure),
    }
}

async fn handle(options: &SandboxOptions, request: &Request) -> Result<Response, Failure> {
    let method = request.method();
    if method != "GET" && method != "HEAD" {
        return Err(SandboxFailure::MethodNotAllowed.into());
    }
    let url = Url::new(&request.url()).map_err(|_| SandboxFailure::UriInvalid)?;
    let params = url.search_params();
    let uri_param = params.get("uri");
    let uri = check_ui_uri(uri_param.as_deref()).map_err(|_| SandboxFailure::UriInvalid)?;

    let signal = request.signal();
    let context = Object::new();
    set(
        &context,
        "request",
        AsRef::<JsValue>::as_ref(request).clone(),
    );
    set(&context, "signal", signal.clone());
    let resolved = call(
        &options.resolve_resource,
        &[&JsValue::from_str(uri), &context],
    )
    .await
    .map_err(|e| Failure {
        failure: if signal.aborted() {
            SandboxFailure::Cancelled
        } else {
            SandboxFailure::Internal
        },
        cause: Some(crate::web::adapters::host::describe(&e)),
    })?;
    if resolved.is_undefined() || resolved.is_null() {
        return Err(SandboxFailure::NotFound.into());
    }
    let invalid_resource = |cause: String| Failure {
        failure: SandboxFailure::ResourceInvalid,
        cause: Some(cause),
    };
    let json = to_json(&resolved).map_err(invalid_resource)?;
    let resource = decode_resource(&json)
        .map_err(|e| invalid_resource(e.message()))?
        .ok_or(SandboxFailure::NotFound)?;

    let theme = select_theme(
        &options.themes,
        params.get("theme").as_deref(),
        &options.default_theme_name,
    );
    let page = render_page(&resource, &theme);
    let body = if method == "HEAD" {
        JsValue::NULL
    } else {
        JsValue::from_str(&page.html)
    };
    respond(
        200,
        &body,
        "text/html; charset=utf-8",
        &[
            ("content-security-policy", &page.content_security_policy),
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
        ],
    )
    .map_err(|e| Failure {
        failure: SandboxFailure::Internal,
        cause: Some(crate::web::adapters::host::describe(&e)),
    })
}

/// The one place a failure becomes a response: the versioned diagnostic (and `allow` on 405);
/// the cause goes to the host's `onError`, never to the client.
fn failure_response(options: &SandboxOptions, failure: Failure) -> Response {
    let Failure { failure, cause } = failure;
    if let (Some(on_error), Some(cause)) = (&options.on_error, cause) {
        let report = Object::new();
        set(&report, "code", failure.row().code);
        set(&report, "cause", cause);
        let _ = on_error.call1(&JsValue::UNDEFINED, &report);
    }
    let status = failure.status();
    let allow: &[(&str, &str)] = if failure == SandboxFailure::MethodNotAllowed {
        &[("allow", "GET, HEAD")]
    } else {
        &[]
    };
    json_response_with(status, &failure.error_body_json(), allow)
        .unwrap_or_else(|_| bare_response(status))
}
