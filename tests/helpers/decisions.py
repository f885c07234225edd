"""DMN files and decision models for the decision tests: a small FEEL table made through the
service, as a modeller would import it."""

from __future__ import annotations

from sqlalchemy import select

from webapp.models import Partition, User

DISCOUNT_DMN = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="pricing" name="Pricing"
    namespace="http://flowdesk.dev/test">
  <decision id="discount" name="Discount">
    <decisionTable id="discount_table" hitPolicy="UNIQUE">
      <input id="amount" label="Amount">
        <inputExpression id="amount_expr" typeRef="number"><text>amount</text></inputExpression>
      </input>
      <input id="tier" label="Tier">
        <inputExpression id="tier_expr" typeRef="string"><text>tier</text></inputExpression>
      </input>
      <output id="rate" label="Rate" name="rate" typeRef="number"/>
      <rule id="small">
        <description>Small orders</description>
        <inputEntry id="small_amount"><text>&lt; 100</text></inputEntry>
        <inputEntry id="small_tier"><text></text></inputEntry>
        <outputEntry id="small_rate"><text>0</text></outputEntry>
      </rule>
      <rule id="gold">
        <inputEntry id="gold_amount"><text>&gt;= 100</text></inputEntry>
        <inputEntry id="gold_tier"><text>"gold"</text></inputEntry>
        <outputEntry id="gold_rate"><text>10</text></outputEntry>
      </rule>
      <rule id="plain">
        <inputEntry id="plain_amount"><text>&gt;= 100</text></inputEntry>
        <inputEntry id="plain_tier"><text>"silver","bronze"</text></inputEntry>
        <outputEntry id="plain_rate"><text>5</text></outputEntry>
      </rule>
    </decisionTable>
  </decision>
</definitions>
"""

FEE_DMN = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="fees" name="Fees"
    namespace="http://flowdesk.dev/test">
  <decision id="fee" name="Fee">
    <variable id="fee_var" name="fee" typeRef="number"/>
    <literalExpression id="fee_expr"><text>amount * 0.1</text></literalExpression>
  </decision>
</definitions>
"""


def partition_id(session, key: str | None) -> int | None:
    if key is None:
        return None
    return session.scalar(select(Partition.id).where(Partition.key == key))


def designer_user(session) -> User:
    user = session.scalar(select(User).where(User.username == "designer"))
    assert user is not None
    return user
