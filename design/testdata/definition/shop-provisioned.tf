resource "aws_dynamodb_table" "shop_provisioned" {
  name           = "shop-provisioned"
  billing_mode   = "PROVISIONED"
  read_capacity  = 5
  write_capacity = 2
  hash_key       = "PK"
  range_key      = "SK"

  attribute {
    name = "AMTPK"
    type = "S"
  }

  attribute {
    name = "AMTSK"
    type = "N"
  }

  attribute {
    name = "GSI1PK"
    type = "S"
  }

  attribute {
    name = "GSI1SK"
    type = "S"
  }

  attribute {
    name = "KEYSPK"
    type = "S"
  }

  attribute {
    name = "LSI1SK"
    type = "S"
  }

  attribute {
    name = "PK"
    type = "S"
  }

  attribute {
    name = "SK"
    type = "S"
  }

  attribute {
    name = "orderId"
    type = "S"
  }

  attribute {
    name = "status"
    type = "S"
  }

  attribute {
    name = "tenant"
    type = "S"
  }

  attribute {
    name = "total"
    type = "N"
  }

  global_secondary_index {
    name               = "GSI1"
    hash_key           = "GSI1PK"
    range_key          = "GSI1SK"
    read_capacity      = 5
    write_capacity     = 2
    projection_type    = "INCLUDE"
    non_key_attributes = ["status", "total", "Type", "_schema"]
  }

  global_secondary_index {
    name            = "KEYS"
    hash_key        = "KEYSPK"
    read_capacity   = 5
    write_capacity  = 2
    projection_type = "KEYS_ONLY"
  }

  global_secondary_index {
    name            = "AMOUNT"
    hash_key        = "AMTPK"
    range_key       = "AMTSK"
    read_capacity   = 5
    write_capacity  = 2
    projection_type = "ALL"
  }

  global_secondary_index {
    name            = "ByTenantStatus"
    read_capacity   = 5
    write_capacity  = 2
    projection_type = "KEYS_ONLY"

    key_schema {
      attribute_name = "tenant"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "status"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "total"
      key_type       = "RANGE"
    }

    key_schema {
      attribute_name = "orderId"
      key_type       = "RANGE"
    }
  }

  local_secondary_index {
    name            = "LSI1"
    range_key       = "LSI1SK"
    projection_type = "ALL"
  }

  ttl {
    attribute_name = "expiresAt"
    enabled        = true
  }
}
