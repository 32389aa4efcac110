//! Reading the few fields of an X.509 certificate that a person needs to act on a TLS failure:
//! who it names, who issued it, when it is valid, and the host names it covers.
//!
//! A small DER reader, for messages only: verification is rustls's. It reads a fixed path
//! through the structure (no recursion), checks every length against what is left, and gives
//! up on anything unexpected, returning what it has.

use std::fmt;

/// What a certificate says of itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CertificateSummary {
    /// The subject's common name, or its organisation when it has no common name.
    pub subject: Option<String>,
    /// The issuer's common name, or its organisation.
    pub issuer: Option<String>,
    /// `notBefore`, as `YYYY-MM-DD HH:MM:SS UTC`.
    pub not_before: Option<String>,
    /// `notAfter`, likewise.
    pub not_after: Option<String>,
    /// The DNS names and IP addresses of the subject alternative names.
    pub names: Vec<String>,
}

impl CertificateSummary {
    /// Reads `der`, keeping whatever could be read.
    pub fn read(der: &[u8]) -> CertificateSummary {
        let mut summary = CertificateSummary::default();
        let _ = summary.fill(der);
        summary
    }

    fn fill(&mut self, der: &[u8]) -> Option<()> {
        let (certificate, _) = element(der, SEQUENCE)?;
        let (tbs, _) = element(certificate, SEQUENCE)?;
        let mut rest = tbs;
        // version [0] EXPLICIT, optional
        if rest.first() == Some(&0xa0) {
            rest = element(rest, 0xa0)?.1;
        }
        rest = element(rest, INTEGER)?.1; // serialNumber
        rest = element(rest, SEQUENCE)?.1; // signature
        let (issuer, after) = element(rest, SEQUENCE)?;
        self.issuer = name(issuer);
        let (validity, after) = element(after, SEQUENCE)?;
        let (not_before, later) = any(validity)?;
        self.not_before = time(not_before);
        self.not_after = any(later).and_then(|(t, _)| time(t));
        let (subject, after) = element(after, SEQUENCE)?;
        self.subject = name(subject);
        let (_, mut rest) = element(after, SEQUENCE)?; // subjectPublicKeyInfo
                                                       // issuerUniqueID [1], subjectUniqueID [2], then extensions [3]
        while let Some((tag, content, after)) = tagged(rest) {
            if tag == 0xa3 {
                self.names = alternative_names(content).unwrap_or_default();
            }
            rest = after;
        }
        Some(())
    }
}

impl fmt::Display for CertificateSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unknown = "(unnamed)";
        write!(
            f,
            "`{}` issued by `{}`",
            self.subject.as_deref().unwrap_or(unknown),
            self.issuer.as_deref().unwrap_or(unknown)
        )?;
        if let (Some(from), Some(to)) = (&self.not_before, &self.not_after) {
            write!(f, ", valid {from} to {to}")?;
        }
        Ok(())
    }
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const INTEGER: u8 = 0x02;
const OID: u8 = 0x06;
const OCTET_STRING: u8 = 0x04;

/// The content of the element at the start of `der` if its tag is `tag`, and what follows it.
fn element(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (found, content, rest) = tagged(der)?;
    (found == tag).then_some((content, rest))
}

/// An element's tag and content.
type Tagged<'a> = (u8, &'a [u8]);

/// The element at the start of `der`, whatever its tag, and what follows it.
fn any(der: &[u8]) -> Option<(Tagged<'_>, &[u8])> {
    let (tag, content, rest) = tagged(der)?;
    Some(((tag, content), rest))
}

/// The tag, content and rest of the element at the start of `der` (definite lengths only).
fn tagged(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let length = rest[..count]
            .iter()
            .fold(0usize, |n, &b| (n << 8) | usize::from(b));
        (length, &rest[count..])
    };
    (rest.len() >= length).then(|| (tag, &rest[..length], &rest[length..]))
}

/// The common name of an X.501 name, else its organisation.
fn name(mut rdns: &[u8]) -> Option<String> {
    let (mut common, mut organisation) = (None, None);
    while let Some((set, rest)) = element(rdns, SET) {
        rdns = rest;
        let mut attributes = set;
        while let Some((attribute, rest)) = element(attributes, SEQUENCE) {
            attributes = rest;
            let Some((oid, value)) = element(attribute, OID) else {
                continue;
            };
            let Some(((_, text), _)) = any(value) else {
                continue;
            };
            // 2.5.4.3 commonName, 2.5.4.10 organizationName
            match oid {
                [0x55, 0x04, 0x03] => common = Some(string(text)),
                [0x55, 0x04, 0x0a] => organisation = Some(string(text)),
                _ => {}
            }
        }
    }
    common.or(organisation)
}

/// A directory string's text: UTF-8, printable and IA5 strings read as UTF-8 (lossily), BMP
/// strings likewise (their text is lost, not their place), control characters dropped.
fn string(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

/// `UTCTime` or `GeneralizedTime` as `YYYY-MM-DD HH:MM:SS UTC`.
fn time((tag, text): Tagged<'_>) -> Option<String> {
    let text = std::str::from_utf8(text).ok()?;
    let digits = text.strip_suffix('Z')?;
    let full = match tag {
        // UTCTime: YYMMDDHHMMSS, years 50–99 in the 1900s.
        0x17 if digits.len() == 12 => {
            let year: u32 = digits[..2].parse().ok()?;
            let century = if year >= 50 { "19" } else { "20" };
            format!("{century}{digits}")
        }
        0x18 if digits.len() == 14 => digits.to_owned(),
        _ => return None,
    };
    if !full.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!(
        "{}-{}-{} {}:{}:{} UTC",
        &full[..4],
        &full[4..6],
        &full[6..8],
        &full[8..10],
        &full[10..12],
        &full[12..14]
    ))
}

/// The DNS names and IP addresses of the subjectAltName extension (2.5.29.17) in
/// `extensions` (the content of `[3]`).
fn alternative_names(extensions: &[u8]) -> Option<Vec<String>> {
    let (mut list, _) = element(extensions, SEQUENCE)?;
    while let Some((extension, rest)) = element(list, SEQUENCE) {
        list = rest;
        let (oid, mut after) = element(extension, OID)?;
        if oid != [0x55, 0x1d, 0x11] {
            continue;
        }
        // critical BOOLEAN, optional
        if after.first() == Some(&0x01) {
            after = any(after)?.1;
        }
        let (value, _) = element(after, OCTET_STRING)?;
        let (mut general, _) = element(value, SEQUENCE)?;
        let mut names = Vec::new();
        while let Some((tag, content, rest)) = tagged(general) {
            general = rest;
            match (tag, content.len()) {
                (0x82, _) => names.push(string(content)),
                (0x87, 4) => names.push(format!(
                    "{}",
                    std::net::Ipv4Addr::new(content[0], content[1], content[2], content[3])
                )),
                (0x87, 16) => {
                    let mut octets = [0u8; 16];
                    octets.copy_from_slice(content);
                    names.push(format!("{}", std::net::Ipv6Addr::from(octets)));
                }
                _ => {}
            }
            if names.len() >= 20 {
                break;
            }
        }
        return Some(names);
    }
    Some(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wraps `content` in a DER element with `tag`.
    fn der(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        if content.len() < 0x80 {
            out.push(content.len() as u8);
        } else {
            out.push(0x82);
            out.extend_from_slice(&(content.len() as u16).to_be_bytes());
        }
        out.extend_from_slice(content);
        out
    }

    fn name_of(cn: &str) -> Vec<u8> {
        let attribute = [der(OID, &[0x55, 0x04, 0x03]), der(0x0c, cn.as_bytes())].concat();
        der(SEQUENCE, &der(SET, &der(SEQUENCE, &attribute)))
    }

    fn certificate(issuer: &str, subject: &str) -> Vec<u8> {
        let validity = [der(0x17, b"250101000000Z"), der(0x18, b"20300101120000Z")].concat();
        let san = der(
            SEQUENCE,
            &[der(0x82, b"mcp.example.com"), der(0x87, &[10, 0, 0, 1])].concat(),
        );
        let extension = [
            der(OID, &[0x55, 0x1d, 0x11]),
            der(0x01, &[0xff]),
            der(OCTET_STRING, &san),
        ]
        .concat();
        let extensions = der(0xa3, &der(SEQUENCE, &der(SEQUENCE, &extension)));
        let tbs = [
            der(0xa0, &der(INTEGER, &[2])),
            der(INTEGER, &[1, 2, 3]),
            der(SEQUENCE, &der(OID, &[0x2a])),
            name_of(issuer),
            der(SEQUENCE, &validity),
            name_of(subject),
            der(SEQUENCE, &der(SEQUENCE, &der(OID, &[0x2a]))),
            extensions,
        ]
        .concat();
        der(
            SEQUENCE,
            &[der(SEQUENCE, &tbs), der(SEQUENCE, &[]), der(0x03, &[0])].concat(),
        )
    }

    #[test]
    fn reads_names_validity_and_alternative_names() {
        let summary = CertificateSummary::read(&certificate("mitmproxy", "mcp.example.com"));
        assert_eq!(summary.issuer.as_deref(), Some("mitmproxy"));
        assert_eq!(summary.subject.as_deref(), Some("mcp.example.com"));
        assert_eq!(
            summary.not_before.as_deref(),
            Some("2025-01-01 00:00:00 UTC")
        );
        assert_eq!(
            summary.not_after.as_deref(),
            Some("2030-01-01 12:00:00 UTC")
        );
        assert_eq!(summary.names, ["mcp.example.com", "10.0.0.1"]);
        assert_eq!(
            summary.to_string(),
            "`mcp.example.com` issued by `mitmproxy`, valid 2025-01-01 00:00:00 UTC to 2030-01-01 12:00:00 UTC"
        );
    }

    #[test]
    fn garbage_and_truncations_give_what_was_read() {
        let whole = certificate("Corp CA", "gw");
        for cut in 0..whole.len() {
            let _ = CertificateSummary::read(&whole[..cut]);
        }
        assert_eq!(
            CertificateSummary::read(b"\x30\x84\xff\xff\xff\xff"),
            CertificateSummary::default()
        );
        assert_eq!(CertificateSummary::read(&[]), CertificateSummary::default());
    }
}
