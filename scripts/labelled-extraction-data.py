#!/usr/bin/env python3
"""Writes the labelled claim-extraction set (tests/labelled_extraction): answers a
RAG pipeline could give, each with the atomic claims a person (the author) lists
for it: one fact per claim, pronouns resolved, greetings, hedges and questions
left out. Split dev/test by a rule that looks at ids only: ordered by the SHA-256
of the id, the responses go to dev and test in turn.

    scripts/labelled-extraction-data.py
"""
import hashlib, json, os

# (id, query, response, [claims a person lists])
ITEMS = [
 ('refund-1', 'What is the refund window?',
  'You can return unused items within 30 days of delivery. The refund goes back to your original payment method.',
  ['Unused items can be returned within 30 days of delivery.', 'The refund goes back to the original payment method.']),
 ('refund-2', 'How are refunds paid?',
  'Refunds are paid to the card you used, usually within 5 to 7 business days, and they include the original shipping cost.',
  ['Refunds are paid to the card used for the purchase.', 'Refunds usually arrive within 5 to 7 business days.', 'Refunds include the original shipping cost.']),
 ('refund-3', 'Can I return a gift card?',
  'Thanks for asking! Unfortunately gift cards cannot be returned or exchanged for cash.',
  ['Gift cards cannot be returned.', 'Gift cards cannot be exchanged for cash.']),
 ('ship-1', 'How long does shipping take?',
  'Standard shipping takes 3 to 5 business days and is free over 50 dollars. Express shipping costs 12 dollars.',
  ['Standard shipping takes 3 to 5 business days.', 'Standard shipping is free over 50 dollars.', 'Express shipping costs 12 dollars.']),
 ('ship-2', 'Do you ship abroad?',
  'We ship to the US and Canada. Orders to Canada take about a week.',
  ['The company ships to the US.', 'The company ships to Canada.', 'Orders to Canada take about a week.']),
 ('ship-3', 'Can I track my parcel?',
  'I think so. You should get a tracking link by email once your order ships.',
  ['A tracking link is sent by email once the order ships.']),
 ('ins-1', 'Does the Basic plan cover dental care?',
  'No. The Basic plan does not include dental care, but the Premium plan includes two check-ups a year.',
  ['The Basic plan does not include dental care.', 'The Premium plan includes two dental check-ups a year.']),
 ('ins-2', 'When must claims be submitted?',
  'Claims must reach us within 90 days of treatment, together with an itemised invoice.',
  ['Claims must be submitted within 90 days of treatment.', 'Claims must include an itemised invoice.']),
 ('ins-3', 'What is the deductible on Premium?',
  'It is 250 euros per year.',
  ['The Premium plan deductible is 250 euros per year.']),
 ('bank-1', 'What does an unarranged overdraft cost?',
  'An unarranged overdraft costs 5 pounds a day, capped at 25 pounds a month.',
  ['An unarranged overdraft costs 5 pounds a day.', 'The unarranged overdraft fee is capped at 25 pounds a month.']),
 ('bank-2', 'What should I do if I lose my card?',
  'Freeze it in the app straight away. Then order a replacement, which arrives in 3 to 5 working days.',
  ['A lost card can be frozen in the app.', 'A replacement card can be ordered.', 'A replacement card arrives in 3 to 5 working days.']),
 ('bank-3', 'Is there a fee for card payments abroad?',
  'Yes, 2.75% of the amount, except in the euro area where it is free.',
  ['Card payments abroad cost 2.75% of the amount.', 'Card payments in the euro area are free.']),
 ('hr-1', 'How much annual leave do I get?',
  'Full-time staff get 25 days plus public holidays, and up to 5 unused days can be carried over.',
  ['Full-time staff get 25 days of annual leave.', 'Public holidays come on top of the annual leave.', 'Up to 5 unused days can be carried over.']),
 ('hr-2', 'When do I need a sick note?',
  'From the fourth day of sickness. Before that, just tell your manager before 9 am.',
  ['A sick note is needed from the fourth day of sickness.', 'Before the fourth day, employees tell their manager before 9 am.']),
 ('hr-3', 'Is there a bonus for long service?',
  'After five years you get two extra days of leave each year. That is the only long-service benefit.',
  ['After five years of service, employees get two extra days of leave each year.', 'Two extra days of leave is the only long-service benefit.']),
 ('sw-1', 'How do I reset my password?',
  'Click "Forgot password" on the sign-in page. We email you a link, which expires after 30 minutes.',
  ['A password is reset with "Forgot password" on the sign-in page.', 'A reset link is emailed.', 'The reset link expires after 30 minutes.']),
 ('sw-2', 'Can I export projects as CSV?',
  'Yes, on the Team and Enterprise plans, from the Export menu.',
  ['Projects can be exported as CSV on the Team plan.', 'Projects can be exported as CSV on the Enterprise plan.', 'CSV export is in the Export menu.']),
 ('sw-3', 'How many collaborators can I invite?',
  'Up to 10 per project. Do you need more? Contact sales.',
  ['Up to 10 collaborators can be invited per project.', 'Sales can be contacted for more collaborators.']),
 ('travel-1', 'How heavy can my checked bag be?',
  'Checked bags can weigh up to 23 kg in economy; in business class the limit is 32 kg.',
  ['Checked bags can weigh up to 23 kg in economy.', 'Checked bags can weigh up to 32 kg in business class.']),
 ('travel-2', 'What if my flight is cancelled?',
  'You can choose a refund or a new flight, and you may be owed up to 600 euros.',
  ['Passengers of a cancelled flight can choose a refund or a new flight.', 'Passengers of a cancelled flight may be owed up to 600 euros.']),
 ('travel-3', 'When does boarding close?',
  'Boarding closes 20 minutes before departure. Please be on time!',
  ['Boarding closes 20 minutes before departure.']),
 ('pharm-1', 'What is the maximum paracetamol dose?',
  'Adults can take 500 mg to 1 g every 4 to 6 hours, but no more than 4 g in 24 hours.',
  ['Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours.', 'Adults should take no more than 4 g of paracetamol in 24 hours.']),
 ('pharm-2', 'How do I renew a prescription?',
  'Order it in the app. It is usually ready in two working days.',
  ['A repeat prescription can be ordered in the app.', 'A repeat prescription is usually ready in two working days.']),
 ('pharm-3', 'Are prescriptions free for pensioners?',
  'Yes, people aged 60 and over pay nothing for prescriptions.',
  ['People aged 60 and over pay nothing for prescriptions.']),
 ('energy-1', 'How do I send a meter reading?',
  'Enter it in your online account. If you have a smart meter, it sends readings automatically every 30 minutes.',
  ['A meter reading can be entered in the online account.', 'Smart meters send readings automatically.', 'Smart meters send readings every 30 minutes.']),
 ('energy-2', 'Is there an exit fee on the fixed tariff?',
  'There is: 50 pounds per fuel, unless you leave in the last 49 days.',
  ['The fixed tariff has an exit fee of 50 pounds per fuel.', 'There is no exit fee when leaving in the last 49 days.']),
 ('tel-1', 'Is EU roaming included?',
  'Yes, roaming in the EU is included in every plan, with a fair-use limit of 20 GB.',
  ['EU roaming is included in every plan.', 'EU roaming has a fair-use limit of 20 GB.']),
 ('tel-2', 'How do I cancel my contract?',
  'Give 30 days notice in the app or in writing after the 24-month minimum term.',
  ['A contract is cancelled with 30 days notice.', 'Notice can be given in the app or in writing.', 'The minimum term is 24 months.']),
 ('ten-1', 'When do I get my deposit back?',
  'Within 10 days of the end of the tenancy, minus any damage.',
  ['The deposit is returned within 10 days of the end of the tenancy.', 'The cost of any damage is deducted from the deposit.']),
 ('ten-2', 'Can I keep a cat?',
  'Cats are allowed with the landlord\'s written consent; dogs are not allowed.',
  ['Cats are allowed with the landlord\'s written consent.', 'Dogs are not allowed.']),
 ('edu-1', 'How much is the part-time MSc?',
  'It costs 6,000 pounds a year over two years, which you can pay in two instalments.',
  ['The part-time MSc costs 6,000 pounds a year.', 'The part-time MSc lasts two years.', 'The fee can be paid in two instalments.']),
 ('edu-2', 'Can I resit a failed exam?',
  'Yes, once, in August. The mark is capped at 40%.',
  ['A failed exam can be resat once.', 'Resits take place in August.', 'A resit mark is capped at 40%.']),
 ('gym-1', 'Can I freeze my membership?',
  'Sure! You can freeze it for up to three months a year for 5 pounds a month.',
  ['A membership can be frozen for up to three months a year.', 'Freezing a membership costs 5 pounds a month.']),
 ('car-1', 'How much is the deposit for a rental car?',
  '300 euros, held on your credit card; premium cars need 1,000 euros.',
  ['The rental deposit is 300 euros.', 'The deposit is held on the credit card.', 'Premium cars need a deposit of 1,000 euros.']),
 ('car-2', 'Do I have to return the car full?',
  'Yes, or you pay 3 euros per missing litre. You can also prepay a full tank.',
  ['The car must be returned with a full tank.', 'Missing fuel costs 3 euros per litre.', 'A full tank can be prepaid.']),
 ('lib-1', 'How many books can I borrow?',
  'You can borrow 12 items, of which at most 4 can be DVDs. Loans last three weeks.',
  ['Members can borrow up to 12 items.', 'At most 4 of the borrowed items can be DVDs.', 'Loans last three weeks.']),
 ('lib-2', 'What is the late fee?',
  'It is 20 pence a day, up to 5 pounds per item. Children\'s books have no late fee.',
  ['The late fee is 20 pence a day.', 'The late fee is capped at 5 pounds per item.', 'Children\'s books have no late fee.']),
 ('elec-1', 'How long is the X200 warranty?',
  'Two years, or three if you register it online.',
  ['The X200 warranty lasts two years.', 'Registering the X200 online extends the warranty to three years.']),
 ('elec-2', 'How long does the X200 take to charge?',
  'About two hours for a full charge, and ten minutes gives three hours of playback.',
  ['A full charge of the X200 takes about two hours.', 'Ten minutes of charging gives three hours of playback.']),
 ('none-1', 'What is the refund window?',
  'I am sorry, I do not know. Please ask our support team.',
  []),
]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'labelled_extraction')
    order = sorted(ITEMS, key=lambda item: hashlib.sha256(item[0].encode()).hexdigest())
    halves = {'dev': [], 'test': []}
    for i, (rid, query, response, claims) in enumerate(order):
        halves[('dev', 'test')[i % 2]].append({'id': rid, 'query': query, 'response': response, 'claims': claims})
    for half, items in halves.items():
        os.makedirs(os.path.join(root, half), exist_ok=True)
        items.sort(key=lambda x: x['id'])
        with open(os.path.join(root, half, 'responses.jsonl'), 'w', encoding='utf-8') as f:
            for x in items:
                f.write(json.dumps(x, ensure_ascii=False) + '\n')
        print(half, len(items), sum(len(x['claims']) for x in items), 'claims')


if __name__ == '__main__':
    main()
