//! `forager install` / `uninstall`: the native-messaging host manifest, written from the
//! top-level `manifest.json` template into the directory each browser reads.

use base64::Engine;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The host's name, as the extension calls `connectNative` with it.
pub const HOST_NAME: &str = "org.forager.host";
/// The manifest template (top-level `manifest.json`), compiled in.
pub const TEMPLATE: &str = include_str!("../../manifest.json");

/// Browsers Forager installs into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Browser {
    /// Chromium (Debian's package and others).
    Chromium,
    /// Google Chrome.
    Chrome,
    /// Firefox.
    Firefox,
}

/// The extension id Chromium derives from a manifest `key`: the first 32 hex digits of the
/// SHA-256 of the DER public key, written with the letters a-p.
pub fn extension_id_from_key(key_b64: &str) -> Option<String> {
    let der = base64::engine::general_purpose::STANDARD
        .decode(key_b64.trim())
        .ok()?;
    let digest = Sha256::digest(&der);
    Some(
        digest
            .iter()
            .take(16)
            .flat_map(|b| [b >> 4, b & 15])
            .map(|n| char::from(b'a' + n))
            .collect(),
    )
}

/// The extension id from an extension's `manifest.json` (its `key`).
pub fn extension_id_from_manifest(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let key = v["key"]
        .as_str()
        .ok_or_else(|| format!("{}: no \"key\"", path.display()))?;
    extension_id_from_key(key).ok_or_else(|| format!("{}: bad \"key\"", path.display()))
}

/// A path from the environment variable `name`, treating an empty value as unset (the XDG
/// Base Directory rule); with `absolute`, a relative value is ignored too, as XDG requires.
pub fn env_path(name: &str, absolute: bool) -> Option<PathBuf> {
    let v = PathBuf::from(std::env::var_os(name)?);
    let usable = !v.as_os_str().is_empty() && (!absolute || v.is_absolute());
    usable.then_some(v)
}

/// Checks a Chromium extension id: 32 letters a-p (it ends up inside an origin the browser
/// matches, so nothing else may pass).
pub fn check_extension_id(id: &str) -> Result<(), String> {
    if id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b)) {
        Ok(())
    } else {
        Err(format!(
            "{id:?} is not a Chromium extension id (32 letters a to p, as chrome://extensions shows)"
        ))
    }
}

/// Writes the host manifest into `dir` with mode 0644 whatever the umask, replacing what is
/// there (a symlink included) by renaming a fresh file over it, never writing through a link.
pub fn write_manifest(dir: &Path, contents: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = dir.join(format!("{HOST_NAME}.json"));
    let tmp = dir.join(format!(".{HOST_NAME}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| file)
}

/// The directory `browser` reads host manifests from; `user_data_dir` for a custom Chromium
/// or Chrome profile (`--user-data-dir`), `home` for another home directory (`--home`: a
/// Firefox run with that HOME reads `<home>/.mozilla/native-messaging-hosts`), else the
/// per-user default.
pub fn manifest_dir(
    browser: Browser,
    user_data_dir: Option<&Path>,
    home: Option<&Path>,
) -> Result<PathBuf, String> {
    if let (Some(u), Browser::Chromium | Browser::Chrome) = (user_data_dir, browser) {
        return Ok(u.join("NativeMessagingHosts"));
    }
    if user_data_dir.is_some() {
        return Err("--user-data-dir is a Chromium profile; for Firefox give --home".into());
    }
    let (home, config) = match home {
        Some(h) if h.is_absolute() => (h.to_path_buf(), h.join(".config")),
        Some(h) => return Err(format!("--home {} is not an absolute path", h.display())),
        None => {
            let home = env_path("HOME", true).ok_or("HOME is not set to an absolute path")?;
            let config = env_path("XDG_CONFIG_HOME", true).unwrap_or_else(|| home.join(".config"));
            (home, config)
        }
    };
    Ok(match browser {
        Browser::Chromium => config.join("chromium/NativeMessagingHosts"),
        Browser::Chrome => config.join("google-chrome/NativeMessagingHosts"),
        Browser::Firefox => home.join(".mozilla/native-messaging-hosts"),
    })
}

/// The extension's gecko id (`browser_specific_settings.gecko.id` in extension/manifest.json):
/// Firefox names the extensions a host allows by it.
pub const FIREFOX_EXTENSION_ID: &str = "forager@example.invalid";

/// The host manifest for `browser`, from the template.
pub fn manifest(browser: Browser, binary: &Path, extension_id: &str) -> Result<String, String> {
    let mut v: serde_json::Value =
        serde_json::from_str(TEMPLATE).map_err(|e| format!("manifest template: {e}"))?;
    v["path"] = binary.to_string_lossy().into_owned().into();
    if browser == Browser::Firefox {
        // Firefox names extensions by their gecko id, not an origin.
        if let Some(o) = v.as_object_mut() {
            o.remove("allowed_origins");
        }
        v["allowed_extensions"] = serde_json::json!([FIREFOX_EXTENSION_ID]);
    } else {
        v["allowed_origins"] = serde_json::json!([format!("chrome-extension://{extension_id}/")]);
    }
    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_firefox_manifest_allows_the_id_the_extension_declares() {
        let ext: serde_json::Value =
            serde_json::from_str(include_str!("../../extension/manifest.json")).unwrap();
        assert_eq!(
            ext["browser_specific_settings"]["gecko"]["id"],
            FIREFOX_EXTENSION_ID
        );
        let m = manifest(Browser::Firefox, Path::new("/usr/bin/forager"), "").unwrap();
        let m: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(
            m["allowed_extensions"],
            serde_json::json!([FIREFOX_EXTENSION_ID])
        );
    }

    #[test]
    fn a_given_home_places_each_browsers_manifest_there() {
        let h = Path::new("/tmp/forager-home");
        assert_eq!(
            manifest_dir(Browser::Firefox, None, Some(h)).unwrap(),
            h.join(".mozilla/native-messaging-hosts")
        );
        assert_eq!(
            manifest_dir(Browser::Chromium, None, Some(h)).unwrap(),
            h.join(".config/chromium/NativeMessagingHosts")
        );
        assert!(manifest_dir(Browser::Firefox, None, Some(Path::new("rel"))).is_err());
        let profile = Some(Path::new("/tmp/profile"));
        assert!(manifest_dir(Browser::Firefox, profile, None).is_err());
    }

    #[test]
    fn id_from_key_uses_letters_a_to_p() {
        let id = extension_id_from_key("AAAA").unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.chars().all(|c| ('a'..='p').contains(&c)));
        assert!(extension_id_from_key("not base64!").is_none());
    }

    #[test]
    fn extension_ids_are_checked_and_manifests_are_0644_files_not_links() {
        use std::os::unix::fs::PermissionsExt;
        assert!(check_extension_id("abcdefghijklmnopabcdefghijklmnop").is_ok());
        for bad in [
            "",
            "abc",
            "abcdefghijklmnopabcdefghijklmnoq",
            "x\"/,\"*://*/*",
        ] {
            assert!(check_extension_id(bad).is_err(), "{bad}");
        }
        let dir = std::env::temp_dir().join(format!("forager-inst-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.join(format!("{HOST_NAME}.json"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let file = write_manifest(&dir, "{}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "keep",
            "link not followed"
        );
        let meta = std::fs::symlink_metadata(&file).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o644);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}");
    }

    #[test]
    fn manifest_allows_only_our_extension() {
        let m = manifest(
            Browser::Chromium,
            Path::new("/opt/forager"),
            "abcdefghijklmnopabcdefghijklmnop",
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(v["name"], HOST_NAME);
        assert_eq!(v["path"], "/opt/forager");
        assert_eq!(
            v["allowed_origins"],
            serde_json::json!(["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"])
        );
    }
}
