//! The smallest Rust Worker: one `#[event(fetch)]` answering "hello".
use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
async fn fetch(_request: Request, _env: Env, _ctx: Context) -> Result<Response> {
    Response::ok("hello")
}
