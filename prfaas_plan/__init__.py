"""prfaas-plan: capacity planning for prefill/decode disaggregation across datacenters."""

__version__ = "0.1.0"
