"""TLS for the test servers: a throw-away CA and a certificate for loopback names.

:class:`~tests.helpers.server.HostileServer` serves https with
:func:`server_tls_context`; clients that check certificates trust
:func:`tls_client_context`.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TLS_ADDRESSES", "TLS_NAMES", "server_tls_context", "tls_client_context"]


@dataclass(frozen=True)
class _TlsMaterial:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


#: Host names the TLS servers' certificate is valid for. Not ``*.test``: that
#: wildcard has too few labels, and service_identity (which Scrapy uses to check,
#: and warn about, every certificate) then rejects the whole certificate. Crawls
#: of other names work but log a "Remote certificate is not valid" warning.
TLS_NAMES = (
    "localhost",
    "a.test",
    "b.test",
    "c.test",
    "other.test",
    "site.test",
    "example.test",
    "www.example.test",
    "xn--bcher-kva.test",  # bücher.test
    "*.hostile.test",
)
TLS_ADDRESSES = ("127.0.0.1", "::1")


@functools.cache
def _tls_material() -> _TlsMaterial:
    """A throw-away CA and a server certificate for :data:`TLS_NAMES` and loopback.

    A separate CA (rather than one self-signed leaf) because OpenSSL will not
    use a non-CA certificate as a trust anchor for :func:`tls_client_context`.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hostile test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(name) for name in TLS_NAMES]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in TLS_ADDRESSES]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return _TlsMaterial(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def server_tls_context() -> ssl.SSLContext:
    material = _tls_material()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # load_cert_chain only reads files.
    with tempfile.TemporaryDirectory(prefix="hostile-tls-") as directory:
        chain = Path(directory, "chain.pem")
        key = Path(directory, "key.pem")
        chain.write_bytes(material.cert_pem + material.ca_pem)
        key.write_bytes(material.key_pem)
        context.load_cert_chain(chain, key)
    return context


def tls_client_context() -> ssl.SSLContext:
    """A client context that trusts the hostile servers' certificate authority."""
    return ssl.create_default_context(cadata=_tls_material().ca_pem.decode("ascii"))
