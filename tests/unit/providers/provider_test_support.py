"""Shared constants for the provider tests: the churn scenario's model and a fixed clock."""

from __future__ import annotations

from tests.support.fake_gms import CHURN_METADATA

SCENARIO = CHURN_METADATA
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
RAW = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.crm.customers,PROD)"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)"
FETCHED_AT = "2025-03-12T08:00:00+00:00"
TOKEN = "tok-3f1d9a7c-do-not-print"
