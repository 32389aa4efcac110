//! `umcp auth`: sign in to a server ahead of time, see who is signed in where (never a token),
//! and sign out, revoking the tokens where the server offers it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use umcp::auth::{SignIn, TokenStore};
use umcp::{CancelHandle, Manager, ManagerOptions, ServerConfig};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::oauth::USER_WAIT;
use crate::output::{say, warn};
use crate::signals::Shutdown;
use crate::{servers, shown, sign_in};

/// Runs `auth login|logout|status|list` with the words after `auth`.
pub fn run(args: &Args, rest: &[&str], shutdown: &Shutdown) -> Result<(), Exit> {
    let (sub, url) = (
        rest.first().copied(),
        rest.get(1).copied().unwrap_or_default(),
    );
    match sub {
        Some("login") => login(args, url, shutdown),
        Some("logout") => logout(args, url, shutdown),
        Some("status") => status(args),
        Some("list") => list(args),
        _ => Err(usage("auth takes login URL, logout URL, status or list")),
    }
}

/// The server at `url` that `auth login` or `logout` is about, named as `--url URL` names it
/// (so the sign-in is the one `umcp --url URL COMMAND` uses), OAuth on.
fn server(args: &Args, url: &str) -> Result<ServerConfig, Exit> {
    if args.stdio.is_some() || args.url.is_some() || args.config.is_some() {
        return Err(usage("auth login and logout take the server's URL alone"));
    }
    let server = servers::from_url(url, args)?;
    let settings = args.oauth.settings_or_default().map_err(usage)?;
    Ok(server.with_oauth(settings))
}

/// Starts the manager for `server` alone, with the token store and, for the sign-in, the device
/// grant where the flow prefers it; with no user step of its own, a server without a token
/// waits for the sign-in rather than ask the user itself.
fn manager(args: &Args, server: ServerConfig, shutdown: &Shutdown) -> Result<Arc<Manager>, Exit> {
    let options = ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(0)
        .with_startup_timeout(args.timeout);
    let options = sign_in::for_sign_in(options, &args.oauth).map_err(usage)?;
    Ok(shutdown.start(|| Manager::start(vec![server], options)))
}

fn login(args: &Args, url: &str, shutdown: &Shutdown) -> Result<(), Exit> {
    let server = server(args, url)?;
    let name = server.name.clone();
    let handler = sign_in::handler(&args.oauth).map_err(usage)?;
    let manager = manager(args, server, shutdown)?;
    // Ctrl-C ends the sign-in's waits at once; the program then stops as ever.
    let cancel = CancelHandle::new();
    let stop = cancel.clone();
    let previous = shutdown.intercept(move |_| {
        stop.cancel();
        false
    });
    let wait = if args.timeout_given {
        args.timeout
    } else {
        USER_WAIT
    };
    let signed_in = manager.sign_in(&name, handler, wait, &cancel);
    shutdown.restore(previous);
    signed_in.map_err(|e| {
        let why = shown::block(&e.to_string());
        Exit(4, format!("signing in to `{name}` failed: {why}"))
    })?;
    let store = sign_in::store(&args.oauth);
    for sign_in in signed_in_to(store.as_ref(), &name)? {
        say(&describe(&sign_in));
    }
    warn(&format!(
        "umcp: signed in; tokens live in {}",
        store.location()
    ));
    Ok(())
}

fn logout(args: &Args, url: &str, shutdown: &Shutdown) -> Result<(), Exit> {
    let server = server(args, url)?;
    let name = server.name.clone();
    let manager = manager(args, server, shutdown)?;
    let revocation = manager
        .sign_out(&name)
        .map_err(|e| Exit(4, format!("signing out of `{name}` failed: {e}")))?;
    say(&format!(
        "signed out of {}: {revocation}",
        shown::line(&name)
    ));
    Ok(())
}

fn status(args: &Args) -> Result<(), Exit> {
    let store = sign_in::store(&args.oauth);
    say(&format!("tokens live in {}", store.location()));
    let sign_ins = SignIn::list(store.as_ref()).map_err(|e| Exit(1, e.to_string()))?;
    if sign_ins.is_empty() {
        say("not signed in anywhere");
    }
    for sign_in in &sign_ins {
        say(&describe(sign_in));
    }
    Ok(())
}

fn list(args: &Args) -> Result<(), Exit> {
    let store = sign_in::store(&args.oauth);
    let sign_ins = SignIn::list(store.as_ref()).map_err(|e| Exit(1, e.to_string()))?;
    if args.json {
        let shown: Vec<serde_json::Value> = sign_ins.iter().map(as_json).collect();
        say(&serde_json::to_string_pretty(&shown).unwrap_or_default());
        return Ok(());
    }
    for sign_in in &sign_ins {
        say(&describe(sign_in));
    }
    Ok(())
}

/// The sign-ins of the server `name` (its entries in the manager's store, `name url`).
fn signed_in_to(store: &dyn TokenStore, name: &str) -> Result<Vec<SignIn>, Exit> {
    let all = SignIn::list(store).map_err(|e| Exit(1, e.to_string()))?;
    let prefix = format!("{name} ");
    Ok(all
        .into_iter()
        .filter(|s| s.key.starts_with(&prefix))
        .collect())
}

/// One line about a sign-in: who, where, with which scopes and until when; never a token.
fn describe(sign_in: &SignIn) -> String {
    let name = sign_in.key.split(' ').next().unwrap_or_default();
    let profile = sign_in
        .profile
        .as_deref()
        .map(|p| format!(" (profile {p})"))
        .unwrap_or_default();
    let scopes = sign_in.scope.as_deref().unwrap_or("(none named)");
    let until = match (sign_in.has_token, sign_in.expires_at) {
        (false, _) => "no token (registered only)".to_owned(),
        (true, None) => "no expiry given".to_owned(),
        (true, Some(at)) => expiry(at, sign_in.refreshable),
    };
    shown::line(&format!(
        "{name}{profile}: {} at {}, scopes {scopes}, {until}",
        sign_in.server, sign_in.issuer
    ))
}

fn expiry(at: SystemTime, refreshable: bool) -> String {
    let renewed = if refreshable {
        ", renewed by its refresh token"
    } else {
        ""
    };
    match at.duration_since(SystemTime::now()) {
        Ok(left) => format!("expires in {}{renewed}", human(left)),
        Err(_) => format!("expired{renewed}"),
    }
}

fn human(left: Duration) -> String {
    let secs = left.as_secs();
    match secs {
        0..=119 => format!("{secs} s"),
        120..=7199 => format!("{} min", secs / 60),
        _ => format!("{} h", secs / 3600),
    }
}

fn as_json(sign_in: &SignIn) -> serde_json::Value {
    let expires = sign_in
        .expires_at
        .and_then(|at| at.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    serde_json::json!({
        "name": sign_in.key.split(' ').next().unwrap_or_default(),
        "server": sign_in.server,
        "profile": sign_in.profile,
        "issuer": sign_in.issuer,
        "client_id": sign_in.client_id,
        "scope": sign_in.scope,
        "expires_at": expires,
        "refreshable": sign_in.refreshable,
        "dpop": sign_in.dpop,
    })
}
