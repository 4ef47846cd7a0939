//! `#[dual]`: one function of the database layer (`server/src/db`),
//! compiled once for SQLite and once for PostgreSQL (api.md "High
//! availability and PostgreSQL"; #45).
//!
//! A query function is written once, with SQLite's SQL. The attribute
//! makes its body a choice between two copies: the SQLite copy as written,
//! and a PostgreSQL copy whose query strings are translated (`?` → `$n`,
//! a few functions renamed, see [`postgres_sql`]) or taken from a
//! `dialect!("sqlite", "postgres")` pair where SQL differs beyond that.
//! Both copies stay `sqlx::query!` macros, so both are checked against
//! their database at compile time (each query's offline data in `.sqlx/`
//! names its database, and sqlx expands it for that one). No
//! `sqlx::Any`: each copy runs on its own driver.
//!
//! The connection argument (the first of type `&mut impl AsConn` or
//! `&mut WriteTx`) picks the copy at run time; inside a copy,
//! `conn.conn()`, `&mut *conn` and a `conn` handed to `fetch…`/`execute`
//! are that database's connection. (`&mut SqliteConnection` is taken as
//! `&mut impl AsConn`.)
//!
//! `JPU_SQLX_BACKEND=sqlite|postgres` at compile time keeps one copy only
//! (the other is `unreachable!`): `.ci/sqlx-prepare` runs the macros
//! online against one database at a time.

use proc_macro::TokenStream;
use proc_macro2::{Delimiter, Group, Ident, Literal, Span, TokenStream as Tokens, TokenTree};
use quote::quote;
use syn::{parse_macro_input, FnArg, ItemFn, Pat, Type};

#[derive(Clone, Copy, PartialEq)]
enum Backend {
    Sqlite,
    Postgres,
}

#[proc_macro_attribute]
pub fn dual(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut function = parse_macro_input!(item as ItemFn);
    let Some(conn) = connection_argument(&mut function) else {
        return syn::Error::new_spanned(
            &function.sig,
            "#[dual] needs an argument of type &mut impl AsConn or &mut WriteTx",
        )
        .to_compile_error()
        .into();
    };
    let body: Tokens = function.block.stmts.iter().map(|s| quote!(#s)).collect();
    let only = std::env::var("JPU_SQLX_BACKEND").ok();
    let copy = |backend: Backend, name: &str| -> Tokens {
        if only.as_deref().is_some_and(|o| o != name) {
            quote!(unreachable!("built for one database only (JPU_SQLX_BACKEND)"))
        } else {
            rewrite(body.clone(), &conn, backend)
        }
    };
    let (sqlite, postgres) = (copy(Backend::Sqlite, "sqlite"), copy(Backend::Postgres, "postgres"));
    let block: syn::Block = syn::parse_quote!({
        if crate::db::AsConn::is_postgres(&*#conn) {
            #postgres
        } else {
            #sqlite
        }
    });
    *function.block = block;
    quote!(#function).into()
}

/// The connection argument's name; a plain connection's type becomes
/// `&mut impl AsConn`.
fn connection_argument(function: &mut ItemFn) -> Option<Ident> {
    for input in function.sig.inputs.iter_mut() {
        let FnArg::Typed(arg) = input else { continue };
        let Pat::Ident(name) = &*arg.pat else { continue };
        let Type::Reference(reference) = &*arg.ty else { continue };
        let named = quote!(#reference).to_string();
        if named.contains("SqliteConnection") {
            *arg.ty = syn::parse_quote!(&mut impl crate::db::AsConn);
            return Some(name.ident.clone());
        }
        if named.contains("AsConn") || named.contains("WriteTx") {
            return Some(name.ident.clone());
        }
    }
    None
}

/// One copy of the body: the connection and every query string as
/// `backend` needs them.
fn rewrite(tokens: Tokens, conn: &Ident, backend: Backend) -> Tokens {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let accessor = Ident::new(if backend == Backend::Sqlite { "sqlite" } else { "postgres" }, Span::call_site());
    let conn_expr = quote!(crate::db::AsConn::#accessor(&mut *#conn));
    let mut out = Tokens::new();
    let mut i = 0;
    while i < trees.len() {
        // `conn.conn()`
        if is_ident(&trees[i], &conn.to_string())
            && is_punct(trees.get(i + 1), '.')
            && trees.get(i + 2).is_some_and(|t| is_ident(t, "conn"))
            && matches!(trees.get(i + 3), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis && g.stream().is_empty())
        {
            out.extend(conn_expr.clone());
            i += 4;
            continue;
        }
        // `&mut *conn`
        if is_punct(Some(&trees[i]), '&')
            && trees.get(i + 1).is_some_and(|t| is_ident(t, "mut"))
            && is_punct(trees.get(i + 2), '*')
            && trees.get(i + 3).is_some_and(|t| is_ident(t, &conn.to_string()))
        {
            out.extend(conn_expr.clone());
            i += 4;
            continue;
        }
        // `.fetch_one(conn)`, `.execute(conn)`: a connection passed on as it is
        if let (TokenTree::Ident(id), Some(TokenTree::Group(g))) = (&trees[i], trees.get(i + 1)) {
            let method = id.to_string();
            let alone: Vec<TokenTree> = g.stream().into_iter().collect();
            if (method.starts_with("fetch") || method == "execute")
                && g.delimiter() == Delimiter::Parenthesis
                && alone.len() == 1
                && is_ident(&alone[0], &conn.to_string())
            {
                let mut group = Group::new(Delimiter::Parenthesis, conn_expr.clone());
                group.set_span(g.span());
                out.extend([trees[i].clone(), TokenTree::Group(group)]);
                i += 2;
                continue;
            }
        }
        // `dialect!("sqlite", "postgres")`
        if is_ident(&trees[i], "dialect") && is_punct(trees.get(i + 1), '!') {
            if let Some(TokenTree::Group(g)) = trees.get(i + 2) {
                let literals: Vec<TokenTree> =
                    g.stream().into_iter().filter(|t| matches!(t, TokenTree::Literal(_))).collect();
                let chosen = if backend == Backend::Sqlite { literals.first() } else { literals.get(1) };
                if let Some(TokenTree::Literal(lit)) = chosen {
                    let lit = if backend == Backend::Postgres { marked(lit) } else { lit.clone() };
                    out.extend([TokenTree::Literal(lit)]);
                    i += 3;
                    continue;
                }
            }
        }
        // `sqlx::query…!(…)`: the first string is the SQL
        if let (TokenTree::Ident(id), Some(TokenTree::Group(g))) = (&trees[i], trees.get(i + 2)) {
            if id.to_string().starts_with("query") && is_punct(trees.get(i + 1), '!') {
                out.extend([trees[i].clone(), trees[i + 1].clone()]);
                let inner = rewrite(g.stream(), conn, backend);
                let inner = if backend == Backend::Postgres { translate_first_string(inner) } else { inner };
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
                i += 3;
                continue;
            }
        }
        match &trees[i] {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), rewrite(g.stream(), conn, backend));
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            other => out.extend([other.clone()]),
        }
        i += 1;
    }
    out
}

fn is_ident(tree: &TokenTree, name: &str) -> bool {
    matches!(tree, TokenTree::Ident(id) if id == name)
}

fn is_punct(tree: Option<&TokenTree>, c: char) -> bool {
    matches!(tree, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

/// The macro's first string literal translated to PostgreSQL (one already
/// chosen by `dialect!` is left as it is).
fn translate_first_string(tokens: Tokens) -> Tokens {
    let mut done = false;
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Literal(lit) if !done => match syn::parse_str::<syn::LitStr>(&lit.to_string()) {
                Ok(s) if !s.value().starts_with(MARK) => {
                    done = true;
                    let mut new = Literal::string(&format!("{MARK}{}", postgres_sql(&s.value())));
                    new.set_span(lit.span());
                    TokenTree::Literal(new)
                }
                Ok(_) => {
                    done = true;
                    TokenTree::Literal(lit)
                }
                Err(_) => TokenTree::Literal(lit),
            },
            other => other,
        })
        .collect()
}

/// Every PostgreSQL query starts with this: a query of the same text for
/// both databases (one without parameters) would otherwise share one
/// offline data file, which names one database.
const MARK: &str = "/* pg */ ";

fn marked(lit: &Literal) -> Literal {
    match syn::parse_str::<syn::LitStr>(&lit.to_string()) {
        Ok(s) => {
            let mut new = Literal::string(&format!("{MARK}{}", s.value()));
            new.set_span(lit.span());
            new
        }
        Err(_) => lit.clone(),
    }
}

/// SQLite's SQL as PostgreSQL reads it: numbered parameters (`?` outside
/// quotes becomes `$1`, `$2`, …; `?3` becomes `$3`), `IFNULL` as
/// `COALESCE`, `REAL` casts as `DOUBLE PRECISION` (PostgreSQL's `REAL` is
/// 4 bytes), `INSERT OR IGNORE` as `ON CONFLICT DO NOTHING`, and a JSON
/// array of ids bound as one parameter read with `json_array_elements_text`.
fn postgres_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut n, mut quote) = (0, None::<char>);
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            // `?3`: SQLite's numbered parameter is PostgreSQL's `$3`
            (None, '?') if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            (None, '?') => {
                n += 1;
                out.push_str(&format!("${n}"));
            }
            _ => out.push(c),
        }
    }
    let mut out = replace_word(&out, "IFNULL(", "COALESCE(");
    out = ids_from_json(&out);
    out = out.replace(" AS REAL)", " AS DOUBLE PRECISION)");
    if out.contains("INSERT OR IGNORE INTO") {
        out = out.replace("INSERT OR IGNORE INTO", "INSERT INTO");
        match out.find("RETURNING") {
            Some(at) => out.insert_str(at, "ON CONFLICT DO NOTHING "),
            None => out.push_str(" ON CONFLICT DO NOTHING"),
        }
    }
    out
}

/// `IN (SELECT value FROM json_each($n))`, SQLite's way to bind a list of
/// ids as one JSON array, read as PostgreSQL reads such an array.
fn ids_from_json(sql: &str) -> String {
    const FROM: &str = "SELECT value FROM json_each($";
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find(FROM) {
        out.push_str(&rest[..at]);
        let after = &rest[at + FROM.len()..];
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() || !after[digits.len()..].starts_with(')') {
            out.push_str(FROM);
            rest = after;
            continue;
        }
        out.push_str(&format!(
            "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(CAST(${digits} AS TEXT) AS JSON)) AS value"
        ));
        rest = &after[digits.len() + 1..];
    }
    out.push_str(rest);
    out
}

fn replace_word(sql: &str, from: &str, to: &str) -> String {
    sql.replace(from, to).replace(&from.to_lowercase(), to)
}

#[cfg(test)]
mod tests {
    use super::postgres_sql;

    #[test]
    fn parameters_are_numbered_outside_quotes() {
        assert_eq!(
            postgres_sql(r#"SELECT id AS "id?", 'a?' FROM t WHERE a = ? AND b = IFNULL(?, 0)"#),
            r#"SELECT id AS "id?", 'a?' FROM t WHERE a = $1 AND b = COALESCE($2, 0)"#
        );
        assert_eq!(
            postgres_sql("INSERT OR IGNORE INTO t (a) VALUES (?) RETURNING a"),
            "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING RETURNING a"
        );
        assert_eq!(
            postgres_sql("UPDATE t SET a = ?1 WHERE b = ?2 AND a IS NOT ?1"),
            "UPDATE t SET a = $1 WHERE b = $2 AND a IS NOT $1"
        );
        assert_eq!(
            postgres_sql("SELECT a FROM t WHERE id IN (SELECT value FROM json_each(?))"),
            "SELECT a FROM t WHERE id IN (SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(CAST($1 AS TEXT) AS JSON)) AS value)"
        );
        assert_eq!(postgres_sql("SELECT CAST(x AS REAL) FROM t"), "SELECT CAST(x AS DOUBLE PRECISION) FROM t");
    }
}
