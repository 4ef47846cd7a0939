//! `jpu files ls|get|put|rm|mkdir`, `jpu datasets` and `jpu
//! data-request` (api.md "Research data"). A remote path is
//! `home:PATH`, `lab:PATH` or `datasets:NAME/PATH` (read-only); files go
//! up and down streamed, never whole in memory.

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::client::{exit, CliError, Client};
use super::render::{print, table, text};

/// A remote path as the API names it.
#[derive(Debug, PartialEq)]
pub struct Remote {
    /// `/v1/files/home/a/b` or `/v1/datasets/NAME/files/a`.
    pub url: String,
    pub writable: bool,
    /// The last component (a download's default name).
    pub name: String,
}

fn encode(path: &str) -> String {
    path.split('/')
        .filter(|p| !p.is_empty())
        .map(|p| url::form_urlencoded::byte_serialize(p.as_bytes()).collect::<String>().replace('+', "%20"))
        .collect::<Vec<_>>()
        .join("/")
}

pub fn remote(text: &str) -> Result<Remote, CliError> {
    let (place, path) = text.split_once(':').ok_or_else(|| {
        CliError::new(
            exit::USAGE,
            format!("`{text}`: name the place, e.g. home:data/x.csv, lab:shared/, datasets:NAME/file"),
        )
    })?;
    let name = path.trim_end_matches('/').rsplit('/').next().unwrap_or_default().to_string();
    match place {
        "home" | "lab" => Ok(Remote { url: format!("/v1/files/{place}/{}", encode(path)), writable: true, name }),
        "datasets" => {
            let path = path.trim_start_matches('/');
            let (dataset, rest) = path.split_once('/').unwrap_or((path, ""));
            if dataset.is_empty() {
                return Err(CliError::new(exit::USAGE, "datasets:NAME/PATH: name the dataset (see `jpu datasets`)"));
            }
            Ok(Remote {
                url: format!("/v1/datasets/{}/files/{}", encode(dataset), encode(rest)),
                writable: false,
                name,
            })
        }
        other => Err(CliError::new(exit::USAGE, format!("`{other}` is not a place: home, lab or datasets"))),
    }
}

pub async fn ls(json: bool, path: &str) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let listing = client.get(&remote(path)?.url).await?;
    if !listing["entries"].is_array() {
        return Err(CliError::new(exit::REFUSED, format!("{path} is a file: `jpu files get {path}` downloads it")));
    }
    print(json, &listing, |l| {
        let rows: Vec<Vec<String>> = l["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                let name = text(&e["name"]) + if e["kind"] == "dir" { "/" } else { "" };
                vec![name, text(&e["kind"]), text(&e["size"]), text(&e["modified"])]
            })
            .collect();
        table(&["NAME", "KIND", "BYTES", "MODIFIED"], &rows)
    });
    Ok(())
}

/// Downloads to `local` (default: the file's name here; `-` = stdout).
pub async fn get(json: bool, path: &str, local: Option<String>) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let remote = remote(path)?;
    let response = client.send(client.request(reqwest::Method::GET, &remote.url)).await?;
    let mut response = Client::succeeded(response).await?;
    let is_listing =
        response.headers().get("content-type").is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if is_listing {
        return Err(CliError::new(exit::REFUSED, format!("{path} is a folder: `jpu files ls {path}` lists it")));
    }
    let local = local.unwrap_or_else(|| remote.name.clone());
    let io = |e: std::io::Error| CliError::new(exit::REFUSED, format!("cannot write {local}: {e}"));
    let mut file = if local == "-" { None } else { Some(tokio::fs::File::create(&local).await.map_err(io)?) };
    let mut bytes = 0u64;
    while let Some(chunk) =
        response.chunk().await.map_err(|e| CliError::new(exit::SERVER, format!("the download broke off: {e}")))?
    {
        match file.as_mut() {
            Some(f) => f.write_all(&chunk).await.map_err(io)?,
            None => std::io::Write::write_all(&mut std::io::stdout().lock(), &chunk).map_err(io)?,
        }
        bytes += chunk.len() as u64;
    }
    match file.as_mut() {
        Some(f) => f.flush().await.map_err(io)?,
        None => std::io::Write::flush(&mut std::io::stdout()).map_err(io)?,
    }
    if local != "-" {
        print(json, &json!({"path": path, "local": local, "bytes": bytes}), |v| {
            format!("{} bytes → {}", v["bytes"], local)
        });
    }
    Ok(())
}

/// Uploads `local`; a remote path ending in `/` (or a place alone) takes
/// the local file's name.
pub async fn put(json: bool, local: &str, path: &str) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let file_name =
        std::path::Path::new(local).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let target =
        if path.ends_with('/') || path.ends_with(':') { format!("{path}{file_name}") } else { path.to_string() };
    let remote = remote(&target)?;
    if !remote.writable {
        return Err(CliError::new(exit::USAGE, "datasets are read-only"));
    }
    let file = tokio::fs::File::open(local)
        .await
        .map_err(|e| CliError::new(exit::USAGE, format!("cannot read {local}: {e}")))?;
    let len = file.metadata().await.map(|m| m.len()).ok();
    let mut request = client.request(reqwest::Method::PUT, &remote.url);
    if let Some(len) = len {
        request = request.header(reqwest::header::CONTENT_LENGTH, len);
    }
    let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(file, 256 * 1024));
    let response = Client::succeeded(client.send(request.body(body)).await?).await?;
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    print(json, &answer, |a| format!("{} bytes → {target}", text(&a["bytes"])));
    Ok(())
}

pub async fn rm(json: bool, path: &str) -> Result<(), CliError> {
    let client = Client::from_config()?;
    client.call(reqwest::Method::DELETE, &remote(path)?.url, None).await?;
    print(json, &json!({"deleted": path}), |_| format!("deleted {path}"));
    Ok(())
}

pub async fn mkdir(json: bool, path: &str) -> Result<(), CliError> {
    let client = Client::from_config()?;
    client.call(reqwest::Method::POST, &format!("{}?mkdir", remote(path)?.url), None).await?;
    print(json, &json!({"made": path}), |_| format!("made {path}"));
    Ok(())
}

pub async fn datasets(json: bool) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let all = client.get("/v1/datasets").await?;
    let requests = client.get("/v1/data-requests").await?;
    print(json, &json!({"datasets": all["datasets"], "requests": requests["requests"]}), |v| {
        let rows: Vec<Vec<String>> = v["datasets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                let labs = d["labs"]
                    .as_array()
                    .map_or("every lab".into(), |l| l.iter().map(text).collect::<Vec<_>>().join(","));
                vec![text(&d["name"]), text(&d["state"]), text(&d["size_bytes"]), labs, text(&d["source"])]
            })
            .collect();
        let asked: Vec<Vec<String>> = v["requests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| vec![text(&r["id"]), text(&r["name"]), text(&r["state"]), text(&r["user"]), text(&r["url"])])
            .collect();
        format!(
            "{}\n\nrequests:\n{}\n\na job sees each READY dataset open to its lab at $JPU_DATASETS/NAME; browse with `jpu files ls datasets:NAME/`",
            table(&["NAME", "STATE", "BYTES", "OPEN TO", "SOURCE"], &rows),
            table(&["ID", "NAME", "STATE", "BY", "URL"], &asked)
        )
    });
    Ok(())
}

pub async fn request(
    json: bool,
    url: String,
    name: String,
    reason: String,
    sha256: Option<String>,
) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let made = client
        .post("/v1/data-requests", &json!({"name": name, "url": url, "sha256": sha256, "reason": reason}))
        .await?;
    print(json, &made, |r| {
        format!(
            "data request {} ({}) is {}: an admin decides; you are told on your notification channels",
            text(&r["id"]),
            text(&r["name"]),
            text(&r["state"])
        )
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths_name_a_place() {
        assert_eq!(remote("home:runs/loss curve.csv").unwrap().url, "/v1/files/home/runs/loss%20curve.csv");
        assert_eq!(remote("lab:").unwrap().url, "/v1/files/lab/");
        let ds = remote("datasets:imagenet/train/a.jpg").unwrap();
        assert_eq!((ds.url.as_str(), ds.writable), ("/v1/datasets/imagenet/files/train/a.jpg", false));
        assert_eq!(remote("home:a/b.txt").unwrap().name, "b.txt");
        for bad in ["nowhere", "attic:x", "datasets:"] {
            assert!(remote(bad).is_err(), "{bad}");
        }
    }
}
