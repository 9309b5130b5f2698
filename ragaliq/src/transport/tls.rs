//! The TLS crypto provider for HTTPS to the real judges.
//!
//! reqwest's default rustls build brings `aws-lc-rs`, whose C build is the
//! single largest cost of compiling a crate that depends on ragaliq (about
//! 45 s of a 2-core machine's time). ragaliq builds rustls without a provider
//! and installs *ring* (a few seconds to build) before the first HTTPS call.
//! If the program installed a provider of its own first, that one is used.

/// Installs ring as the process's rustls provider, unless one is installed.
pub(crate) fn install_provider() {
    #[cfg(feature = "rustls")]
    {
        // `Err` only means another provider is installed already: keep it.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(all(test, feature = "rustls"))]
mod tests {
    #[test]
    fn a_provider_is_installed_once_and_kept() {
        super::install_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        super::install_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
